// The builtin tests (`x is name`) (builtins.h), as Jinja2 3.1 defines them.
#include <cctype>
#include <cmath>
#include <map>

#include "jinja/builtins.h"
#include "jinja/evaluator.h"

namespace infera::jinja {
namespace {

Value Arg(CallArgs& args, std::string_view name) {
  Value v = args.Get(0, name);
  if (v.is_undefined() && args.positional.empty() && args.keyword.empty()) {
    throw Error("test needs an argument ('" + std::string(name) + "')");
  }
  return v;
}

bool TestDefined(Evaluator&, const Value& v, CallArgs&) { return !v.is_undefined(); }
bool TestUndefined(Evaluator&, const Value& v, CallArgs&) { return v.is_undefined(); }
bool TestNone(Evaluator&, const Value& v, CallArgs&) { return v.is_none(); }
bool TestString(Evaluator&, const Value& v, CallArgs&) { return v.is_string(); }
bool TestNumber(Evaluator&, const Value& v, CallArgs&) { return v.is_number(); }
bool TestInteger(Evaluator&, const Value& v, CallArgs&) { return v.is_int(); }
bool TestFloat(Evaluator&, const Value& v, CallArgs&) { return v.is_float(); }
bool TestMapping(Evaluator&, const Value& v, CallArgs&) { return v.is_dict() && !v.is_namespace(); }
bool TestIterable(Evaluator&, const Value& v, CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_list() || v.is_iterator() || (v.is_dict() && !v.is_namespace());
}
bool TestSequence(Evaluator&, const Value& v, CallArgs&) {
  return v.is_undefined() || v.is_string() || v.is_list() || (v.is_dict() && !v.is_namespace());
}
bool TestBoolean(Evaluator&, const Value& v, CallArgs&) { return v.is_bool(); }
bool TestTrue(Evaluator&, const Value& v, CallArgs&) { return v.is_bool() && v.as_bool(); }
bool TestFalse(Evaluator&, const Value& v, CallArgs&) { return v.is_bool() && !v.as_bool(); }
bool TestCallable(Evaluator&, const Value& v, CallArgs&) { return v.is_callable(); }
bool TestEq(Evaluator&, const Value& v, CallArgs& a) { return Equal(v, Arg(a, "other")); }
bool TestNe(Evaluator&, const Value& v, CallArgs& a) { return !Equal(v, Arg(a, "other")); }
bool TestLt(Evaluator&, const Value& v, CallArgs& a) { return Less(v, Arg(a, "other")); }
bool TestGt(Evaluator&, const Value& v, CallArgs& a) { return Less(Arg(a, "other"), v); }
bool TestLe(Evaluator&, const Value& v, CallArgs& a) { return !Less(Arg(a, "other"), v); }
bool TestGe(Evaluator&, const Value& v, CallArgs& a) { return !Less(v, Arg(a, "other")); }
bool TestSameAs(Evaluator&, const Value& v, CallArgs& a) {
  const Value other = Arg(a, "other");
  if (v.is_list() || v.is_dict() || v.is_callable() || v.is_iterator()) return v.kind() == other.kind() && Equal(v, other) && v.Repr() == other.Repr();
  return v.kind() == other.kind() && Equal(v, other);
}

bool TestIn(Evaluator&, const Value& v, CallArgs& a) {
  const Value seq = Arg(a, "seq");
  if (seq.is_string()) return v.is_string() && seq.as_string().find(v.as_string()) != std::string::npos;
  if (seq.is_list()) {
    for (const Value& item : seq.as_list()) {
      if (Equal(item, v)) return true;
    }
    return false;
  }
  if (seq.is_dict()) return v.is_string() && seq.Find(v.as_string());
  if (seq.is_iterator()) {  // consumes up to and including the match, as Python's `in`
    Value item;
    while (seq.TakeNext(&item)) {
      if (Equal(item, v)) return true;
    }
    return false;
  }
  if (seq.is_undefined()) return false;
  throw Error("argument of type '" + std::string(seq.TypeName()) + "' is not iterable");
}

int64_t Integer(const Value& v, const char* test) {
  if (v.is_int() || v.is_bool()) return v.as_int();
  throw Error(std::string("'") + test + "' test needs an integer, got " + std::string(v.TypeName()));
}

bool TestOdd(Evaluator&, const Value& v, CallArgs&) { return Integer(v, "odd") % 2 != 0; }
bool TestEven(Evaluator&, const Value& v, CallArgs&) { return Integer(v, "even") % 2 == 0; }
bool TestDivisibleBy(Evaluator&, const Value& v, CallArgs& a) {
  const int64_t d = Integer(Arg(a, "num"), "divisibleby");
  if (d == 0) throw Error("integer division or modulo by zero");
  if (d == -1) return true;
  return Integer(v, "divisibleby") % d == 0;
}

bool TestLower(Evaluator&, const Value& v, CallArgs&) {
  const std::string s = v.Str();
  bool cased = false;
  for (char c : s) {
    if (std::isupper(static_cast<unsigned char>(c))) return false;
    cased = cased || std::islower(static_cast<unsigned char>(c));
  }
  return cased;
}
bool TestUpper(Evaluator&, const Value& v, CallArgs&) {
  const std::string s = v.Str();
  bool cased = false;
  for (char c : s) {
    if (std::islower(static_cast<unsigned char>(c))) return false;
    cased = cased || std::isupper(static_cast<unsigned char>(c));
  }
  return cased;
}

const std::map<std::string_view, TestFn>& Tests() {
  static const auto* tests = new std::map<std::string_view, TestFn>{
      {"!=", TestNe},         {"<", TestLt},           {"<=", TestLe},
      {"==", TestEq},         {">", TestGt},           {">=", TestGe},
      {"boolean", TestBoolean}, {"callable", TestCallable}, {"defined", TestDefined},
      {"divisibleby", TestDivisibleBy}, {"eq", TestEq}, {"equalto", TestEq},
      {"even", TestEven},     {"false", TestFalse},    {"float", TestFloat},
      {"ge", TestGe},         {"greaterthan", TestGt}, {"gt", TestGt},
      {"in", TestIn},         {"integer", TestInteger}, {"iterable", TestIterable},
      {"le", TestLe},         {"lessthan", TestLt},    {"lower", TestLower},
      {"lt", TestLt},         {"mapping", TestMapping}, {"ne", TestNe},
      {"none", TestNone},     {"number", TestNumber},  {"odd", TestOdd},
      {"sameas", TestSameAs}, {"sequence", TestSequence}, {"string", TestString},
      {"true", TestTrue},     {"undefined", TestUndefined}, {"upper", TestUpper},
  };
  return *tests;
}

}  // namespace

TestFn FindTest(std::string_view name) {
  auto it = Tests().find(name);
  return it == Tests().end() ? nullptr : it->second;
}

}  // namespace infera::jinja
