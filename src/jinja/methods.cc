// Methods of str, dict and list that templates call (builtins.h), with Python's
// semantics. Hugging Face renders in an ImmutableSandboxedEnvironment: methods that
// mutate a list or dict (append, pop, update, ...) are refused there, and here.
#include <algorithm>
#include <cctype>
#include <set>

#include "jinja/builtins.h"
#include "jinja/evaluator.h"

namespace infera::jinja {

std::string Strip(std::string_view s, const std::string* chars, bool left, bool right) {
  auto strip_this = [&](char c) {
    if (chars) return chars->find(c) != std::string::npos;
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || (c >= 0x1c && c <= 0x1f);
  };
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e && strip_this(s[b])) ++b;
  }
  if (right) {
    while (e > b && strip_this(s[e - 1])) --e;
  }
  return std::string(s.substr(b, e - b));
}

namespace {

std::string StrArg(const CallArgs& args, size_t i, std::string_view name, const char* method) {
  const Value v = args.Get(i, name);
  if (!v.is_string()) throw Error(std::string(method) + "() argument must be str, not " + std::string(v.TypeName()));
  return v.as_string();
}

Value StripMethod(const Value& self, CallArgs& args, bool left, bool right) {
  const Value chars = args.Get(0, "chars", Value::None());
  std::string set = chars.is_string() ? chars.as_string() : "";
  return Value::String(Strip(self.as_string(), chars.is_string() ? &set : nullptr, left, right));
}

bool AffixMatch(const Value& self, const CallArgs& args, bool prefix) {
  const Value affix = args.Get(0, "prefix");
  std::vector<std::string> options;
  if (affix.is_list()) {
    for (const Value& v : affix.as_list()) options.push_back(v.Str());
  } else if (affix.is_string()) {
    options.push_back(affix.as_string());
  } else {
    throw Error(std::string(prefix ? "startswith" : "endswith") + " first arg must be str or a tuple of str");
  }
  const std::string& s = self.as_string();
  for (const std::string& o : options) {
    if (o.size() <= s.size() && (prefix ? s.compare(0, o.size(), o) == 0 : s.compare(s.size() - o.size(), o.size(), o) == 0)) {
      return true;
    }
  }
  return false;
}

Value Split(Evaluator& ev, const Value& self, CallArgs& args, bool from_right) {
  const Value sep = args.Get(0, "sep", Value::None());
  const Value max_v = args.Get(1, "maxsplit", Value::Int(-1));
  int64_t maxsplit = max_v.is_int() ? max_v.as_int() : -1;
  const std::string& s = self.as_string();
  ValueList parts;
  if (sep.is_none() || sep.is_undefined()) {
    // Runs of whitespace separate; no empty parts.
    std::vector<std::pair<size_t, size_t>> words;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i >= s.size()) break;
      size_t j = i;
      while (j < s.size() && !std::isspace(static_cast<unsigned char>(s[j]))) ++j;
      words.emplace_back(i, j);
      i = j;
    }
    if (maxsplit >= 0 && static_cast<int64_t>(words.size()) > maxsplit + 1) {
      if (from_right) {
        const size_t keep = words.size() - maxsplit;
        parts.push_back(Value::String(Strip(s.substr(0, words[keep - 1].second), nullptr, true, true)));
        for (size_t k = keep; k < words.size(); ++k) parts.push_back(Value::String(s.substr(words[k].first, words[k].second - words[k].first)));
      } else {
        for (int64_t k = 0; k < maxsplit; ++k) parts.push_back(Value::String(s.substr(words[k].first, words[k].second - words[k].first)));
        parts.push_back(Value::String(Strip(s.substr(words[maxsplit].first), nullptr, true, true)));
      }
    } else {
      for (auto [b, e] : words) parts.push_back(Value::String(s.substr(b, e - b)));
    }
    ev.CountIterations(static_cast<int64_t>(parts.size()));
    return Value::List(std::move(parts));
  }
  if (!sep.is_string()) throw Error("split() separator must be str or None");
  const std::string& d = sep.as_string();
  if (d.empty()) throw Error("empty separator");
  std::vector<std::string> pieces;
  if (!from_right) {
    size_t pos = 0;
    while (maxsplit != 0) {
      const size_t at = s.find(d, pos);
      if (at == std::string::npos) break;
      pieces.push_back(s.substr(pos, at - pos));
      pos = at + d.size();
      --maxsplit;
    }
    pieces.push_back(s.substr(pos));
  } else {
    size_t end = s.size();
    while (maxsplit != 0 && end >= d.size()) {
      const size_t at = s.rfind(d, end - d.size());
      if (at == std::string::npos) break;
      pieces.push_back(s.substr(at + d.size(), end - at - d.size()));
      end = at;
      --maxsplit;
    }
    pieces.push_back(s.substr(0, end));
    std::reverse(pieces.begin(), pieces.end());
  }
  ev.CountIterations(static_cast<int64_t>(pieces.size()));
  for (std::string& p : pieces) parts.push_back(Value::String(std::move(p)));
  return Value::List(std::move(parts));
}

Value StrReplace(Evaluator& ev, const Value& self, CallArgs& args) {
  CallArgs filter_args;
  filter_args.positional = {Value::String(StrArg(args, 0, "old", "replace")), Value::String(StrArg(args, 1, "new", "replace")),
                            args.Get(2, "count", Value::None())};
  return FindFilter("replace")(ev, self, filter_args);
}

// str.format with {} / {0} / {name} fields (no format specs).
Value StrFormat(Evaluator& ev, const Value& self, CallArgs& args) {
  const std::string& f = self.as_string();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '{' && i + 1 < f.size() && f[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (f[i] == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (f[i] == '{') {
      const size_t close = f.find('}', i);
      if (close == std::string::npos) throw Error("Single '{' encountered in format string");
      const std::string field = f.substr(i + 1, close - i - 1);
      if (field.find_first_of(":!.[") != std::string::npos) throw Error("format specs in str.format are not supported");
      Value v;
      if (field.empty()) {
        v = args.Get(auto_index++, "\x01");
      } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
        v = args.Get(std::stoul(field), "\x01");
      } else {
        v = args.Get(SIZE_MAX, field);
      }
      if (v.is_undefined()) throw Error("str.format: no argument for field '{" + field + "}'");
      out += v.Str();
      i = close;
    } else {
      out += f[i];
    }
  }
  return ev.MakeString(std::move(out));
}

Value StrMethod(Evaluator& ev, const Value& self, CallArgs& args, const std::string& name) {
  const std::string& s = self.as_string();
  if (name == "strip") return StripMethod(self, args, true, true);
  if (name == "lstrip") return StripMethod(self, args, true, false);
  if (name == "rstrip") return StripMethod(self, args, false, true);
  if (name == "split") return Split(ev, self, args, false);
  if (name == "rsplit") return Split(ev, self, args, true);
  if (name == "startswith") return Value::Bool(AffixMatch(self, args, true));
  if (name == "endswith") return Value::Bool(AffixMatch(self, args, false));
  if (name == "upper") return FindFilter("upper")(ev, self, args);
  if (name == "lower") return FindFilter("lower")(ev, self, args);
  if (name == "capitalize") return FindFilter("capitalize")(ev, self, args);
  if (name == "title") {
    std::string out = s;
    bool prev_cased = false;
    for (char& c : out) {
      const auto u = static_cast<unsigned char>(c);
      const bool alpha = std::isalpha(u);
      c = static_cast<char>(alpha ? (prev_cased ? std::tolower(u) : std::toupper(u)) : c);
      prev_cased = alpha;
    }
    return Value::String(std::move(out));
  }
  if (name == "replace") return StrReplace(ev, self, args);
  if (name == "format") return StrFormat(ev, self, args);
  if (name == "join") {
    std::string out;
    bool first = true;
    for (const Value& v : ev.Iterate(args.Get(0, "iterable"))) {
      if (!v.is_string()) throw Error("sequence item: expected str instance, " + std::string(v.TypeName()) + " found");
      if (!first) out += s;
      first = false;
      out += v.as_string();
      if (out.size() > ev.options().limits.max_output_bytes) ev.MakeString(out);
    }
    return Value::String(std::move(out));
  }
  if (name == "find" || name == "rfind" || name == "count" || name == "index") {
    const std::string sub = StrArg(args, 0, "sub", name.c_str());
    if (name == "count") {
      if (sub.empty()) return Value::Int(static_cast<int64_t>(CodePoints(s).size()) + 1);
      int64_t n = 0;
      for (size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size())) ++n;
      return Value::Int(n);
    }
    const size_t at = name == "rfind" ? s.rfind(sub) : s.find(sub);
    if (at == std::string::npos) {
      if (name == "index") throw Error("substring not found");
      return Value::Int(-1);
    }
    return Value::Int(static_cast<int64_t>(CodePoints(s.substr(0, at)).size()));
  }
  auto all = [&](int (*pred)(int)) {
    return Value::Bool(!s.empty() && std::all_of(s.begin(), s.end(), [&](char c) { return pred(static_cast<unsigned char>(c)) != 0; }));
  };
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal") return all(::isdigit);
  if (name == "isalpha") return all(::isalpha);
  if (name == "isalnum") return all(::isalnum);
  if (name == "isspace") return all(::isspace);
  if (name == "islower") return FindTest("lower")(ev, self, args) ? Value::Bool(true) : Value::Bool(false);
  if (name == "isupper") return FindTest("upper")(ev, self, args) ? Value::Bool(true) : Value::Bool(false);
  if (name == "splitlines") {
    ValueList lines;
    size_t start = 0;
    while (start < s.size()) {
      const size_t nl = s.find('\n', start);
      lines.push_back(Value::String(s.substr(start, nl == std::string::npos ? std::string::npos : nl - start)));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
    return Value::List(std::move(lines));
  }
  throw Error("'str' object has no attribute '" + name + "'");
}

Value DictMethod(Evaluator& ev, const Value& self, CallArgs& args, const std::string& name) {
  if (name == "items") return FindFilter("items")(ev, self, args);
  if (name == "keys") return Value::List(ev.Iterate(self));
  if (name == "values") {
    ValueList out;
    for (const auto& [k, v] : self.as_dict()) out.push_back(v);
    return Value::List(std::move(out));
  }
  if (name == "get") {
    const Value key = args.Get(0, "key");
    const Value fallback = args.Get(1, "default", Value::None());
    if (key.is_string()) {
      if (const Value* v = self.Find(key.as_string())) return *v;
    }
    return fallback;
  }
  throw Error("'dict' object has no attribute '" + name + "'");
}

Value ListMethod(Evaluator&, const Value& self, CallArgs& args, const std::string& name) {
  const ValueList& items = self.as_list();
  const Value x = args.Get(0, "value");
  if (name == "count") {
    int64_t n = 0;
    for (const Value& v : items) n += Equal(v, x);
    return Value::Int(n);
  }
  for (size_t i = 0; i < items.size(); ++i) {
    if (Equal(items[i], x)) return Value::Int(static_cast<int64_t>(i));
  }
  throw Error(x.Repr() + " is not in list");
}

const std::set<std::string, std::less<>>& StrMethods() {
  static const auto* names = new std::set<std::string, std::less<>>{
      "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "upper", "lower",
      "capitalize", "title", "replace", "format", "join", "find", "rfind", "count", "index", "isdigit",
      "isnumeric", "isdecimal", "isalpha", "isalnum", "isspace", "islower", "isupper", "splitlines"};
  return *names;
}

// What the immutable sandbox refuses (a call is an error; the attribute exists).
bool MutatingMethod(const Value& obj, std::string_view name) {
  static const std::set<std::string_view> list = {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"};
  static const std::set<std::string_view> dict = {"update", "pop", "popitem", "setdefault", "clear"};
  return obj.is_list() ? list.count(name) > 0 : obj.is_dict() && dict.count(name) > 0;
}

}  // namespace

Value FindMethod(const Value& obj, const std::string& name) {
  if (MutatingMethod(obj, name)) {
    return Value::Callable(name, [name, type = std::string(obj.TypeName())](Evaluator&, CallArgs&) -> Value {
      throw Error("access to attribute '" + name + "' of '" + type + "' object is unsafe (templates cannot modify it)");
    });
  }
  if (obj.is_string() && StrMethods().count(name)) {
    return Value::Callable(name, [obj, name](Evaluator& ev, CallArgs& args) { return StrMethod(ev, obj, args, name); });
  }
  if (obj.is_dict() && !obj.is_namespace() && (name == "items" || name == "keys" || name == "values" || name == "get")) {
    return Value::Callable(name, [obj, name](Evaluator& ev, CallArgs& args) { return DictMethod(ev, obj, args, name); });
  }
  if (obj.is_list() && (name == "count" || name == "index")) {
    return Value::Callable(name, [obj, name](Evaluator& ev, CallArgs& args) { return ListMethod(ev, obj, args, name); });
  }
  return Value();
}

}  // namespace infera::jinja
