// The builtin filters (builtins.h), each as Jinja2 3.1 defines it; tojson as Hugging Face
// overrides it (json.dumps with ensure_ascii=False).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "jinja/builtins.h"
#include "jinja/evaluator.h"

namespace infera::jinja {
namespace {

int64_t Length(const Value& v) {
  if (v.is_undefined()) return 0;
  if (v.is_string()) return static_cast<int64_t>(CodePoints(v.as_string()).size());
  if (v.is_list()) return static_cast<int64_t>(v.as_list().size());
  if (v.is_dict()) return static_cast<int64_t>(v.as_dict().size());
  throw Error("object of type '" + std::string(v.TypeName()) + "' has no len()");
}

std::string AsciiLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string AsciiUpper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// An attribute path "a.b" or an index (Jinja2's make_attrgetter).
Value Attribute(const Value& item, const Value& attribute) {
  if (attribute.is_int()) return GetItem(item, attribute);
  Value v = item;
  const std::string& path = attribute.as_string();
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    v = digits ? GetItem(v, Value::Int(std::atoll(part.c_str()))) : GetItem(v, Value::String(part));
    if (dot == std::string::npos) return v;
    start = dot + 1;
  }
}

// The sort key of dictsort/sort/unique: strings lowered unless case_sensitive.
Value SortKey(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::String(AsciiLower(v.as_string()));
  return v;
}

Value FilterTrim(Evaluator& ev, const Value& in, CallArgs& args) {
  const Value chars = args.Get(0, "chars");
  std::string set = chars.is_string() ? chars.as_string() : "";
  return ev.MakeString(Strip(in.Str(), chars.is_string() ? &set : nullptr, true, true));
}

Value FilterLength(Evaluator&, const Value& in, CallArgs&) { return Value::Int(Length(in)); }

Value FilterFirst(Evaluator& ev, const Value& in, CallArgs&) {
  if (in.is_iterator()) {  // next(iter(seq)): takes one item, the rest stay
    Value item;
    return in.TakeNext(&item) ? item : Value::Undefined("No first item, sequence was empty.");
  }
  ValueList items = ev.Iterate(in);
  return items.empty() ? Value::Undefined("No first item, sequence was empty.") : items.front();
}

Value FilterLast(Evaluator& ev, const Value& in, CallArgs&) {
  if (in.is_iterator()) throw Error("'" + std::string(in.TypeName()) + "' object is not reversible");
  ValueList items = ev.Iterate(in);
  return items.empty() ? Value::Undefined("No last item, sequence was empty.") : items.back();
}

Value FilterJoin(Evaluator& ev, const Value& in, CallArgs& args) {
  const Value sep = args.Get(0, "d", Value::String(""));
  const Value attribute = args.Get(1, "attribute", Value::None());
  std::string out;
  bool first = true;
  for (const Value& item : ev.Iterate(in)) {
    if (!first) out += sep.Str();
    first = false;
    out += (attribute.is_none() ? item : Attribute(item, attribute)).Str();
    if (out.size() > ev.options().limits.max_output_bytes) ev.MakeString(out);
  }
  return Value::String(std::move(out));
}

Value FilterDefault(Evaluator&, const Value& in, CallArgs& args) {
  const Value fallback = args.Get(0, "default_value", Value::String(""));
  const bool boolean = args.Get(1, "boolean", Value::Bool(false)).Truthy();
  if (in.is_undefined() || (boolean && !in.Truthy())) return fallback;
  return in;
}

Value FilterToJson(Evaluator& ev, const Value& in, CallArgs& args) {
  const bool ensure_ascii = args.Get(0, "ensure_ascii", Value::Bool(false)).Truthy();
  const Value indent = args.Get(1, "indent", Value::None());
  const Value separators = args.Get(2, "separators", Value::None());
  const bool sort_keys = args.Get(3, "sort_keys", Value::Bool(false)).Truthy();
  const bool has_indent = !indent.is_none() && !indent.is_undefined();
  if (has_indent && !indent.is_int()) throw Error("tojson: indent must be an integer");
  std::string item_sep = has_indent ? "," : ", ", key_sep = ": ";
  if (separators.is_list() && separators.as_list().size() == 2 && separators.as_list()[0].is_string() &&
      separators.as_list()[1].is_string()) {
    item_sep = separators.as_list()[0].as_string();
    key_sep = separators.as_list()[1].as_string();
  }
  const int n = has_indent ? static_cast<int>(std::clamp<int64_t>(indent.as_int(), 0, 64)) : 0;
  return ev.MakeString(ToJson(in, ensure_ascii, n, has_indent, item_sep, key_sep, sort_keys));
}

Value FilterString(Evaluator&, const Value& in, CallArgs&) { return Value::String(in.Str()); }

Value FilterInt(Evaluator&, const Value& in, CallArgs& args) {
  const Value fallback = args.Get(0, "default", Value::Int(0));
  if (in.is_int() || in.is_bool()) return Value::Int(in.as_int());
  if (in.is_float()) {
    if (!std::isfinite(in.as_double())) throw Error("cannot convert float infinity or NaN to integer");
    if (std::fabs(in.as_double()) > 9.2e18) throw Error("integer overflow in int");
    return Value::Int(static_cast<int64_t>(in.as_double()));
  }
  if (in.is_string()) {
    std::string s = Strip(in.as_string(), nullptr, true, true);
    // Python's int() takes underscores between digits; float() takes no hex.
    for (size_t k = 1; k + 1 < s.size(); ++k) {
      if (s[k] == '_' && std::isdigit(static_cast<unsigned char>(s[k - 1])) &&
          std::isdigit(static_cast<unsigned char>(s[k + 1]))) {
        s.erase(k, 1);
      }
    }
    if (s.find_first_of("xXpP") != std::string::npos) return fallback;
    char* end = nullptr;
    errno = 0;
    const long long i = std::strtoll(s.c_str(), &end, 10);
    if (!s.empty() && *end == '\0' && errno == 0) return Value::Int(i);
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') {
      if (!std::isfinite(d)) throw Error("cannot convert float infinity or NaN to integer");
      if (std::fabs(d) > 9.2e18) throw Error("integer overflow in int");
      return Value::Int(static_cast<int64_t>(d));
    }
  }
  return fallback;
}

Value FilterFloat(Evaluator&, const Value& in, CallArgs& args) {
  const Value fallback = args.Get(0, "default", Value::Float(0.0));
  if (in.is_number()) return Value::Float(in.as_double());
  if (in.is_string()) {
    const std::string s = Strip(in.as_string(), nullptr, true, true);
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (!s.empty() && *end == '\0') return Value::Float(d);
  }
  return fallback;
}

Value FilterList(Evaluator& ev, const Value& in, CallArgs&) { return Value::List(ev.Iterate(in)); }

// map(attribute=...) / map('filter', args...)
Value FilterMap(Evaluator& ev, const Value& in, CallArgs& args) {
  ValueList out;
  if (!in.Truthy()) return Value::Iterator({}, "generator");  // Jinja2: `if value:` guards the loop
  const Value attribute = args.Get(SIZE_MAX, "attribute");
  if (!attribute.is_undefined()) {
    const Value fallback = args.Get(SIZE_MAX, "default");
    for (const Value& item : ev.Iterate(in)) {
      Value v = Attribute(item, attribute);
      out.push_back(v.is_undefined() && !fallback.is_undefined() ? fallback : v);
    }
    return Value::Iterator(std::move(out), "generator");
  }
  if (args.positional.empty() || !args.positional[0].is_string()) throw Error("map: a filter name or attribute= is needed");
  const std::string name = args.positional[0].as_string();
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const Value& item : ev.Iterate(in)) out.push_back(ev.ApplyFilter(name, item, rest));
  return Value::Iterator(std::move(out), "generator");
}

Value Select(Evaluator& ev, const Value& in, CallArgs& args, bool by_attribute, bool keep) {
  if (!in.Truthy()) return Value::Iterator({}, "generator");  // Jinja2: `if value:` guards the loop
  size_t next = 0;
  Value attribute;
  if (by_attribute) {
    if (args.positional.empty()) throw Error("selectattr/rejectattr need an attribute");
    attribute = args.positional[next++];
  }
  std::string test;
  if (next < args.positional.size()) test = args.positional[next++].Str();
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + std::min(next, args.positional.size()), args.positional.end());
  ValueList out;
  for (const Value& item : ev.Iterate(in)) {
    const Value v = by_attribute ? Attribute(item, attribute) : item;
    const bool passed = test.empty() ? v.Truthy() : ev.ApplyTest(test, v, rest);
    if (passed == keep) out.push_back(item);
  }
  return Value::Iterator(std::move(out), "generator");
}

Value FilterSelect(Evaluator& ev, const Value& in, CallArgs& args) { return Select(ev, in, args, false, true); }
Value FilterReject(Evaluator& ev, const Value& in, CallArgs& args) { return Select(ev, in, args, false, false); }
Value FilterSelectAttr(Evaluator& ev, const Value& in, CallArgs& args) { return Select(ev, in, args, true, true); }
Value FilterRejectAttr(Evaluator& ev, const Value& in, CallArgs& args) { return Select(ev, in, args, true, false); }

Value FilterUpper(Evaluator&, const Value& in, CallArgs&) { return Value::String(AsciiUpper(in.Str())); }
Value FilterLower(Evaluator&, const Value& in, CallArgs&) { return Value::String(AsciiLower(in.Str())); }

Value FilterCapitalize(Evaluator&, const Value& in, CallArgs&) {
  std::string s = AsciiLower(in.Str());
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return Value::String(std::move(s));
}

// Jinja2's title: a word starts after whitespace or one of -([{<.
Value FilterTitle(Evaluator&, const Value& in, CallArgs&) {
  std::string s = in.Str();
  bool start = true;
  for (char& c : s) {
    const auto u = static_cast<unsigned char>(c);
    c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = std::isspace(u) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
  }
  return Value::String(std::move(s));
}

Value FilterReplace(Evaluator& ev, const Value& in, CallArgs& args) {
  const std::string s = in.Str();
  const std::string from = args.Get(0, "old").Str();
  const std::string to = args.Get(1, "new").Str();
  const Value count_v = args.Get(2, "count", Value::None());
  int64_t count = count_v.is_int() ? count_v.as_int() : -1;
  std::string out;
  if (from.empty()) {
    // Python inserts `to` around every character.
    const auto cps = CodePoints(s);
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count != 0) {
        out += to;
        --count;
      }
      if (i < cps.size()) out += cps[i];
      if (out.size() > ev.options().limits.max_output_bytes) ev.MakeString(out);
    }
    return Value::String(std::move(out));
  }
  size_t pos = 0;
  while (count != 0) {
    const size_t at = s.find(from, pos);
    if (at == std::string::npos) break;
    out.append(s, pos, at - pos);
    out += to;
    pos = at + from.size();
    --count;
    if (out.size() > ev.options().limits.max_output_bytes) ev.MakeString(out);
  }
  out.append(s, pos);
  return ev.MakeString(std::move(out));
}

Value FilterIndent(Evaluator& ev, const Value& in, CallArgs& args) {
  const Value width = args.Get(0, "width", Value::Int(4));
  const bool first = args.Get(1, "first", Value::Bool(false)).Truthy();
  const bool blank = args.Get(2, "blank", Value::Bool(false)).Truthy();
  const std::string indentation =
      width.is_string() ? width.as_string() : std::string(static_cast<size_t>(std::clamp<int64_t>(width.as_int(), 0, 256)), ' ');
  std::string s = in.Str() + "\n";
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    const size_t nl = s.find('\n', start);
    lines.push_back(s.substr(start, nl - start));
    start = nl + 1;
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    if (i > 0 && (blank || !lines[i].empty())) out += indentation;
    out += lines[i];
    if (out.size() > ev.options().limits.max_output_bytes) ev.MakeString(out);
  }
  if (first) out = indentation + out;
  return ev.MakeString(std::move(out));
}

Value FilterRound(Evaluator&, const Value& in, CallArgs& args) {
  const int64_t precision = args.Get(0, "precision", Value::Int(0)).as_int();
  const std::string method = args.Get(1, "method", Value::String("common")).Str();
  if (!in.is_number()) throw Error("round: not a number");
  if (!in.is_float() && method == "common") return Value::Int(in.as_int());  // Python: round(int) is an int
  if (method == "common" && precision >= 0 && precision <= 60) {
    // Python rounds the exact binary value half to even, as printf does.
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), in.as_double());
    return Value::Float(std::strtod(buf, nullptr));
  }
  const double scale = std::pow(10.0, static_cast<double>(std::clamp<int64_t>(precision, -300, 300)));
  const double x = in.as_double() * scale;
  double r = method == "ceil" ? std::ceil(x) : method == "floor" ? std::floor(x) : std::nearbyint(x);  // Python rounds half to even
  return Value::Float(r / scale);
}

Value FilterAbs(Evaluator&, const Value& in, CallArgs&) {
  if (in.is_float()) return Value::Float(std::fabs(in.as_double()));
  if (in.is_int() || in.is_bool()) {
    if (in.as_int() == INT64_MIN) throw Error("integer overflow in abs");
    return Value::Int(std::llabs(in.as_int()));
  }
  throw Error("bad operand type for abs(): '" + std::string(in.TypeName()) + "'");
}

ValueList ItemPairs(const Value& in) {
  ValueList out;
  if (in.is_undefined()) return out;
  if (!in.is_dict()) throw Error("items: can only get item pairs from a mapping");
  for (const auto& [k, v] : in.as_dict()) out.push_back(Value::List({Value::String(k), v}, true));
  return out;
}

Value FilterItems(Evaluator&, const Value& in, CallArgs&) { return Value::Iterator(ItemPairs(in), "generator"); }

Value FilterDictSort(Evaluator&, const Value& in, CallArgs& args) {
  const bool case_sensitive = args.Get(0, "case_sensitive", Value::Bool(false)).Truthy();
  const std::string by = args.Get(1, "by", Value::String("key")).Str();
  const bool reverse = args.Get(2, "reverse", Value::Bool(false)).Truthy();
  ValueList items = ItemPairs(in);
  const size_t pos = by == "value" ? 1 : 0;
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? Less(SortKey(b.as_list()[pos], case_sensitive), SortKey(a.as_list()[pos], case_sensitive))
                   : Less(SortKey(a.as_list()[pos], case_sensitive), SortKey(b.as_list()[pos], case_sensitive));
  });
  return Value::List(std::move(items));
}

Value FilterSort(Evaluator& ev, const Value& in, CallArgs& args) {
  const bool reverse = args.Get(0, "reverse", Value::Bool(false)).Truthy();
  const bool case_sensitive = args.Get(1, "case_sensitive", Value::Bool(false)).Truthy();
  const Value attribute = args.Get(2, "attribute", Value::None());
  ValueList items = ev.Iterate(in);
  auto key = [&](const Value& v) { return SortKey(attribute.is_none() ? v : Attribute(v, attribute), case_sensitive); };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    return reverse ? Less(key(b), key(a)) : Less(key(a), key(b));
  });
  return Value::List(std::move(items));
}

Value FilterUnique(Evaluator& ev, const Value& in, CallArgs& args) {
  const bool case_sensitive = args.Get(0, "case_sensitive", Value::Bool(false)).Truthy();
  const Value attribute = args.Get(1, "attribute", Value::None());
  ValueList out, seen;
  for (const Value& item : ev.Iterate(in)) {
    const Value key = SortKey(attribute.is_none() ? item : Attribute(item, attribute), case_sensitive);
    bool dup = false;
    for (const Value& s : seen) dup = dup || Equal(s, key);
    if (dup) continue;
    ev.CountIterations(static_cast<int64_t>(seen.size()));
    seen.push_back(key);
    out.push_back(item);
  }
  return Value::Iterator(std::move(out), "generator");
}

Value FilterSafe(Evaluator&, const Value& in, CallArgs&) { return Value::Markup(in.Str()); }

Value FilterReverse(Evaluator& ev, const Value& in, CallArgs&) {
  if (in.is_string()) {
    auto cps = CodePoints(in.as_string());
    std::string out;
    for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
    return Value::String(std::move(out));
  }
  // Jinja2 returns reversed(value) where Python can reverse it (a list: an iterator; a
  // dict: its keys), else the reversed list of the items (an iterator's).
  const bool reversible = in.is_list() || in.is_dict() || in.is_undefined();
  ValueList items = ev.Iterate(in);
  std::reverse(items.begin(), items.end());
  if (!reversible) return Value::List(std::move(items));
  return Value::Iterator(std::move(items), in.is_list() ? (in.is_tuple() ? "reversed" : "list_reverseiterator")
                                           : in.is_dict() ? "dict_reversekeyiterator" : "reversed");
}

Value FilterSum(Evaluator& ev, const Value& in, CallArgs& args) {
  const Value attribute = args.Get(SIZE_MAX, "attribute", Value::None());
  Value total = args.Get(SIZE_MAX, "start", Value::Int(0));
  for (const Value& item : ev.Iterate(in)) {
    const Value v = attribute.is_none() ? item : Attribute(item, attribute);
    if (!v.is_number() || !total.is_number()) throw Error("sum: not a number");
    total = total.is_float() || v.is_float() ? Value::Float(total.as_double() + v.as_double())
                                             : Value::Int(total.as_int() + v.as_int());
  }
  return total;
}

Value MinMax(Evaluator& ev, const Value& in, CallArgs& args, bool max) {
  const bool case_sensitive = args.Get(0, "case_sensitive", Value::Bool(false)).Truthy();
  const Value attribute = args.Get(1, "attribute", Value::None());
  ValueList items = ev.Iterate(in);
  if (items.empty()) return Value::Undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  auto key = [&](const Value& v) { return SortKey(attribute.is_none() ? v : Attribute(v, attribute), case_sensitive); };
  for (size_t i = 1; i < items.size(); ++i) {
    if (max ? Less(key(items[best]), key(items[i])) : Less(key(items[i]), key(items[best]))) best = i;
  }
  return items[best];
}
Value FilterMin(Evaluator& ev, const Value& in, CallArgs& args) { return MinMax(ev, in, args, false); }
Value FilterMax(Evaluator& ev, const Value& in, CallArgs& args) { return MinMax(ev, in, args, true); }

Value FilterWordCount(Evaluator&, const Value& in, CallArgs&) {
  int64_t n = 0;
  bool in_word = false;
  for (char c : in.Str()) {
    const bool word = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
    if (word && !in_word) ++n;
    in_word = word;
  }
  return Value::Int(n);
}

const std::map<std::string_view, FilterFn>& Filters() {
  static const auto* filters = new std::map<std::string_view, FilterFn>{
      {"abs", FilterAbs},           {"capitalize", FilterCapitalize}, {"count", FilterLength},
      {"d", FilterDefault},         {"default", FilterDefault},       {"dictsort", FilterDictSort},
      {"first", FilterFirst},       {"float", FilterFloat},           {"indent", FilterIndent},
      {"int", FilterInt},           {"items", FilterItems},           {"join", FilterJoin},
      {"last", FilterLast},         {"length", FilterLength},         {"list", FilterList},
      {"lower", FilterLower},       {"map", FilterMap},               {"max", FilterMax},
      {"min", FilterMin},           {"reject", FilterReject},         {"rejectattr", FilterRejectAttr},
      {"replace", FilterReplace},   {"reverse", FilterReverse},       {"round", FilterRound},
      {"safe", FilterSafe},         {"select", FilterSelect},         {"selectattr", FilterSelectAttr},
      {"sort", FilterSort},         {"string", FilterString},         {"sum", FilterSum},
      {"title", FilterTitle},       {"tojson", FilterToJson},         {"trim", FilterTrim},
      {"unique", FilterUnique},     {"upper", FilterUpper},           {"wordcount", FilterWordCount},
  };
  return *filters;
}

}  // namespace

FilterFn FindFilter(std::string_view name) {
  auto it = Filters().find(name);
  return it == Filters().end() ? nullptr : it->second;
}

}  // namespace infera::jinja
