// Value: a Jinja value as the templates see it — Python's data model reduced to what chat
// templates use: undefined, none, bool, int, float, str, list/tuple, dict (string keys,
// insertion order kept, as Python's), namespace, callables (builtins and macros) and the
// one-shot iterators Jinja2's lazy filters return (map, select, reject, selectattr,
// rejectattr, unique, items: a generator; reverse of a list: a list_reverseiterator).
// Lists and dicts are shared (Python reference semantics; the sandbox makes them immutable
// to templates except a namespace's attributes). docs/jinja.md.
//
// Not thread-safe to mutate; values built for one render stay with that render.
#ifndef INFERA_JINJA_VALUE_H_
#define INFERA_JINJA_VALUE_H_

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace infera::jinja {

// A render or parse error: the message (and the template line where known). Internal to
// the library: Template turns it into an absl::Status.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int line = 0) : std::runtime_error(message), line_(line) {}
  int line() const { return line_; }
  void set_line(int line) { line_ = line; }

 private:
  int line_;
};

class Value;
class Evaluator;
struct CallArgs;
using ValueList = std::vector<Value>;
using ValueDict = std::vector<std::pair<std::string, Value>>;
using Function = std::function<Value(Evaluator&, CallArgs&)>;

class Value {
 public:
  enum class Kind { kUndefined, kNone, kBool, kInt, kFloat, kString, kList, kDict, kFunction, kIterator };

  Value() = default;  // undefined
  static Value Undefined(std::string hint = "") {
    Value v;
    v.str_ = std::make_shared<std::string>(std::move(hint));
    return v;
  }
  static Value None() { return Value(Kind::kNone); }
  static Value Bool(bool b) {
    Value v(Kind::kBool);
    v.int_ = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v(Kind::kInt);
    v.int_ = i;
    return v;
  }
  static Value Float(double d) {
    Value v(Kind::kFloat);
    v.float_ = d;
    return v;
  }
  static Value String(std::string s) {
    Value v(Kind::kString);
    v.str_ = std::make_shared<std::string>(std::move(s));
    return v;
  }
  // markupsafe's Markup, what the `safe` filter returns: a str that `+` joins by
  // HTML-escaping the other (plain) str operand. Every other operation gives a plain str.
  static Value Markup(std::string s) {
    Value v = String(std::move(s));
    v.flag_ = true;
    return v;
  }
  static Value List(ValueList items, bool tuple = false) {
    Value v(Kind::kList);
    v.list_ = std::make_shared<ValueList>(std::move(items));
    v.flag_ = tuple;
    return v;
  }
  static Value Dict(ValueDict items = {}, bool is_namespace = false) {
    Value v(Kind::kDict);
    v.dict_ = std::make_shared<ValueDict>(std::move(items));
    v.flag_ = is_namespace;
    return v;
  }
  static Value Callable(std::string name, Function f) {
    Value v(Kind::kFunction);
    v.str_ = std::make_shared<std::string>(std::move(name));
    v.fn_ = std::make_shared<Function>(std::move(f));
    return v;
  }

  // A one-shot iterator over `items` (computed eagerly; Jinja2 computes them as they are
  // consumed, which only differs in when an error inside a filter is raised). As in
  // Python it is always true, iterates once (a second loop sees what the first left),
  // has no length, is not JSON, is not subscriptable and equals only itself.
  // `type_name` is Python's ("generator", "list_reverseiterator").
  static Value Iterator(ValueList items, std::string type_name) {
    Value v(Kind::kIterator);
    std::reverse(items.begin(), items.end());  // stored back to front: the next item is back()
    v.list_ = std::make_shared<ValueList>(std::move(items));
    v.str_ = std::make_shared<std::string>(std::move(type_name));
    return v;
  }

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  // Python's numbers.Number: bool counts, as in Python.
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat || kind_ == Kind::kBool; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_markup() const { return kind_ == Kind::kString && flag_; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_tuple() const { return kind_ == Kind::kList && flag_; }
  bool is_dict() const { return kind_ == Kind::kDict; }
  bool is_namespace() const { return kind_ == Kind::kDict && flag_; }
  bool is_callable() const { return kind_ == Kind::kFunction; }
  bool is_iterator() const { return kind_ == Kind::kIterator; }

  bool as_bool() const { return int_ != 0; }
  int64_t as_int() const { return int_; }
  double as_double() const { return kind_ == Kind::kFloat ? float_ : static_cast<double>(int_); }
  const std::string& as_string() const { return *str_; }
  const ValueList& as_list() const { return *list_; }
  const ValueDict& as_dict() const { return *dict_; }
  ValueDict& mutable_dict() const { return *dict_; }
  const Function& as_function() const { return *fn_; }
  const std::string& function_name() const { return *str_; }
  // What an undefined value stands for ("'x' is undefined"), for error messages.
  std::string undefined_hint() const { return str_ && !str_->empty() ? *str_ : "value"; }

  // An iterator's identity (Python's `is`).
  const void* iterator_id() const { return list_.get(); }
  // An iterator's remaining items, consumed (every copy of the value sees it exhausted).
  ValueList TakeAll() const;
  // An iterator's next item, consumed; false when it is exhausted.
  bool TakeNext(Value* item) const;

  // A dict's member, or nullptr.
  const Value* Find(std::string_view key) const;
  void Set(const std::string& key, Value value) const;

  bool Truthy() const;
  // Python's str() (what `{{ }}` prints) and repr().
  std::string Str() const;
  std::string Repr() const;
  // Python's type name, for error messages.
  std::string_view TypeName() const;

 private:
  explicit Value(Kind k) : kind_(k) {}
  Kind kind_ = Kind::kUndefined;
  bool flag_ = false;
  int64_t int_ = 0;
  double float_ = 0;
  std::shared_ptr<std::string> str_;
  std::shared_ptr<ValueList> list_;
  std::shared_ptr<ValueDict> dict_;
  std::shared_ptr<Function> fn_;
};

// Arguments of a call: positional then keyword, as written.
struct CallArgs {
  ValueList positional;
  ValueDict keyword;
  // The i-th positional argument or the keyword `name`, or `fallback`.
  Value Get(size_t i, std::string_view name, Value fallback = Value()) const;
};

// Python's == (numbers compare by value across int/float/bool; containers deeply).
bool Equal(const Value& a, const Value& b);
// Python's <; an Error for types Python cannot order.
bool Less(const Value& a, const Value& b);

// Python's float repr (shortest round-trip: 1.0, 0.1, 1e-05, 1e+16).
std::string FloatRepr(double d);
// Python's repr of a str ('…' or "…", escapes).
std::string StringRepr(std::string_view s);

// UTF-8 code points (a string's Python length, index and slice work on these).
std::vector<std::string_view> CodePoints(std::string_view s);

}  // namespace infera::jinja

#endif  // INFERA_JINJA_VALUE_H_
