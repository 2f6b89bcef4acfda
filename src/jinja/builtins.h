// The builtin filters (filters.cc), tests (tests.cc), methods of str/dict/list
// (methods.cc), globals (globals.cc) and JSON conversion (json.cc) of the Jinja engine,
// each as Jinja2 and Hugging Face define them. docs/jinja.md lists them.
#ifndef INFERA_JINJA_BUILTINS_H_
#define INFERA_JINJA_BUILTINS_H_

#include <string>
#include <string_view>

#include "jinja/value.h"

namespace infera::jinja {

class Evaluator;

using FilterFn = Value (*)(Evaluator&, const Value& input, CallArgs& args);
using TestFn = bool (*)(Evaluator&, const Value& input, CallArgs& args);

// nullptr when there is no such filter / test.
FilterFn FindFilter(std::string_view name);
TestFn FindTest(std::string_view name);

// obj.name as a bound method (str, dict, list), or undefined when `obj` has none.
Value FindMethod(const Value& obj, const std::string& name);

// The globals: range, dict, namespace, raise_exception, strftime_now.
ValueDict Globals();

// Hugging Face's tojson: json.dumps(value, ensure_ascii, indent, separators, sort_keys).
// Throws Error for values JSON cannot hold (undefined, callables).
std::string ToJson(const Value& value, bool ensure_ascii, int indent, bool has_indent, const std::string& item_sep,
                   const std::string& key_sep, bool sort_keys);

// JSON text -> value (objects keep their key order), through common/json_reader.h (its
// depth and size limits). Throws Error on bad JSON.
Value FromJson(std::string_view json);

// Python's str.strip family: `chars` null strips whitespace.
std::string Strip(std::string_view s, const std::string* chars, bool left, bool right);

}  // namespace infera::jinja

#endif  // INFERA_JINJA_BUILTINS_H_
