#include "jinja/value.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace infera::jinja {

const Value* Value::Find(std::string_view key) const {
  if (kind_ != Kind::kDict) return nullptr;
  for (const auto& [k, v] : *dict_) {
    if (k == key) return &v;
  }
  return nullptr;
}

void Value::Set(const std::string& key, Value value) const {
  for (auto& [k, v] : *dict_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  dict_->emplace_back(key, std::move(value));
}

ValueList Value::TakeAll() const {
  ValueList items;
  items.swap(*list_);
  std::reverse(items.begin(), items.end());
  return items;
}

bool Value::TakeNext(Value* item) const {
  if (list_->empty()) return false;
  *item = std::move(list_->back());
  list_->pop_back();
  return true;
}

bool Value::Truthy() const {
  switch (kind_) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool:
    case Kind::kInt: return int_ != 0;
    case Kind::kFloat: return float_ != 0;
    case Kind::kString: return !str_->empty();
    case Kind::kList: return !list_->empty();
    case Kind::kDict: return flag_ || !dict_->empty();  // a namespace object is always true
    case Kind::kFunction:
    case Kind::kIterator: return true;  // Python: a generator is true even when exhausted
  }
  return false;
}

std::string_view Value::TypeName() const {
  switch (kind_) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return flag_ ? "Markup" : "str";
    case Kind::kList: return flag_ ? "tuple" : "list";
    case Kind::kDict: return flag_ ? "Namespace" : "dict";
    case Kind::kFunction: return "function";
    case Kind::kIterator: return *str_;
  }
  return "";
}

std::string FloatRepr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: fixed for 1e-4 <= |d| < 1e16,
  // scientific (two-digit exponent at least) otherwise.
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, end);
  const size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  const int exponent = std::stoi(sci.substr(e + 1));
  bool negative = false;
  if (!mantissa.empty() && mantissa[0] == '-') {
    negative = true;
    mantissa.erase(0, 1);
  }
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  std::string out = negative ? "-" : "";
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0) {
      out += "0." + std::string(-exponent - 1, '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exponent + 1) {
      out += digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  char exp[16];
  std::snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+', exponent < 0 ? -exponent : exponent);
  return out + exp;
}

std::vector<std::string_view> CodePoints(std::string_view s) {
  std::vector<std::string_view> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    if (i + n > s.size()) n = s.size() - i;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

namespace {

// Python's str.isprintable for one UTF-8 code point, approximately: ASCII controls, DEL,
// C1 controls and the line/paragraph separators are escaped, everything else printed.
uint32_t Decode(std::string_view cp) {
  const auto c = static_cast<unsigned char>(cp[0]);
  if (cp.size() == 1) return c;
  uint32_t v = c & (cp.size() == 2 ? 0x1F : cp.size() == 3 ? 0x0F : 0x07);
  for (size_t i = 1; i < cp.size(); ++i) v = (v << 6) | (static_cast<unsigned char>(cp[i]) & 0x3F);
  return v;
}

}  // namespace

std::string StringRepr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (std::string_view cp : CodePoints(s)) {
    const uint32_t c = Decode(cp);
    char buf[16];
    if (c == static_cast<uint32_t>(quote) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else if (c == 0xAD || c == 0x2028 || c == 0x2029) {
      std::snprintf(buf, sizeof(buf), c > 0xFF ? "\\u%04x" : "\\x%02x", c);
      out += buf;
    } else {
      out += cp;
    }
  }
  out += quote;
  return out;
}

std::string Value::Str() const {
  switch (kind_) {
    case Kind::kUndefined: return "";
    case Kind::kString: return *str_;
    default: return Repr();
  }
}

std::string Value::Repr() const {
  switch (kind_) {
    case Kind::kUndefined: return "";
    case Kind::kNone: return "None";
    case Kind::kBool: return int_ ? "True" : "False";
    case Kind::kInt: return std::to_string(int_);
    case Kind::kFloat: return FloatRepr(float_);
    case Kind::kString: return flag_ ? "Markup(" + StringRepr(*str_) + ")" : StringRepr(*str_);
    case Kind::kList: {
      std::string out = flag_ ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) {
        if (i) out += ", ";
        out += (*list_)[i].Repr();
      }
      if (flag_ && list_->size() == 1) out += ",";
      return out + (flag_ ? ")" : "]");
    }
    case Kind::kDict: {
      std::string out = flag_ ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [k, v] : *dict_) {
        if (!first) out += ", ";
        first = false;
        out += StringRepr(k) + ": " + v.Repr();
      }
      return out + (flag_ ? "}>" : "}");
    }
    case Kind::kFunction: return "<function " + *str_ + ">";
    case Kind::kIterator: return "<" + *str_ + " object>";  // Python adds an address
  }
  return "";
}

Value CallArgs::Get(size_t i, std::string_view name, Value fallback) const {
  if (i < positional.size()) return positional[i];
  for (const auto& [k, v] : keyword) {
    if (k == name) return v;
  }
  return fallback;
}

bool Equal(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      if (a.is_tuple() != b.is_tuple() || a.as_list().size() != b.as_list().size()) return false;
      for (size_t i = 0; i < a.as_list().size(); ++i) {
        if (!Equal(a.as_list()[i], b.as_list()[i])) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      if (a.is_namespace() || b.is_namespace()) return &a.as_dict() == &b.as_dict();
      if (a.as_dict().size() != b.as_dict().size()) return false;
      for (const auto& [k, v] : a.as_dict()) {
        const Value* other = b.Find(k);
        if (!other || !Equal(v, *other)) return false;
      }
      return true;
    }
    case Value::Kind::kFunction: return &a.as_function() == &b.as_function();
    case Value::Kind::kIterator: return a.iterator_id() == b.iterator_id();
    default: return false;
  }
}

bool Less(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
    const ValueList& x = a.as_list();
    const ValueList& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!Equal(x[i], y[i])) return Less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw Error("'<' not supported between instances of '" + std::string(a.TypeName()) + "' and '" +
              std::string(b.TypeName()) + "'");
}

}  // namespace infera::jinja
