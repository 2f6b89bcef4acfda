// tojson and JSON parsing for the Jinja engine (builtins.h).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/json_reader.h"
#include "jinja/builtins.h"
#include "rapidjson/document.h"

namespace infera::jinja {
namespace {

void AppendJsonString(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  for (std::string_view cp : CodePoints(s)) {
    const auto c = static_cast<unsigned char>(cp[0]);
    char buf[16];
    if (cp.size() == 1) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || (ensure_ascii && c >= 0x7F && c < 0x80)) {
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            out += buf;
          } else {
            out += cp;
          }
      }
    } else if (ensure_ascii) {
      uint32_t v = c & (cp.size() == 2 ? 0x1F : cp.size() == 3 ? 0x0F : 0x07);
      for (size_t i = 1; i < cp.size(); ++i) v = (v << 6) | (static_cast<unsigned char>(cp[i]) & 0x3F);
      if (v >= 0x10000) {
        v -= 0x10000;
        std::snprintf(buf, sizeof(buf), "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        std::snprintf(buf, sizeof(buf), "\\u%04x", v);
      }
      out += buf;
    } else {
      out += cp;
    }
  }
  out += '"';
}

struct JsonWriter {
  bool ensure_ascii;
  bool has_indent;
  int indent;
  const std::string& item_sep;
  const std::string& key_sep;
  bool sort_keys;
  std::string out;

  void Newline(int level) {
    out += '\n';
    out.append(static_cast<size_t>(indent) * level, ' ');
  }

  void Write(const Value& v, int level) {
    if (level > 512) throw Error("tojson: value nests too deeply");
    switch (v.kind()) {
      case Value::Kind::kNone: out += "null"; return;
      case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out += std::to_string(v.as_int()); return;
      case Value::Kind::kFloat: {
        const double d = v.as_double();
        out += std::isnan(d) ? "NaN" : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity") : FloatRepr(d);
        return;
      }
      case Value::Kind::kString: AppendJsonString(out, v.as_string(), ensure_ascii); return;
      case Value::Kind::kList: {
        const ValueList& items = v.as_list();
        if (items.empty()) {
          out += "[]";
          return;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (has_indent) Newline(level + 1);
          Write(items[i], level + 1);
        }
        if (has_indent) Newline(level);
        out += ']';
        return;
      }
      case Value::Kind::kDict: {
        if (v.is_namespace()) break;
        std::vector<const std::pair<std::string, Value>*> items;
        for (const auto& kv : v.as_dict()) items.push_back(&kv);
        if (sort_keys) {
          std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
        }
        if (items.empty()) {
          out += "{}";
          return;
        }
        out += '{';
        for (size_t i = 0; i < items.size(); ++i) {
          if (i) out += item_sep;
          if (has_indent) Newline(level + 1);
          AppendJsonString(out, items[i]->first, ensure_ascii);
          out += key_sep;
          Write(items[i]->second, level + 1);
        }
        if (has_indent) Newline(level);
        out += '}';
        return;
      }
      default: break;
    }
    throw Error("Object of type " + std::string(v.is_undefined() ? "Undefined" : v.TypeName()) +
                " is not JSON serializable");
  }
};

Value Convert(const rapidjson::Value& j, int depth) {
  if (depth > 512) throw Error("JSON nests too deeply");
  if (j.IsNull()) return Value::None();
  if (j.IsBool()) return Value::Bool(j.GetBool());
  if (j.IsInt64()) return Value::Int(j.GetInt64());
  if (j.IsNumber()) return Value::Float(j.GetDouble());
  if (j.IsString()) return Value::String(std::string(j.GetString(), j.GetStringLength()));
  if (j.IsArray()) {
    ValueList items;
    for (const auto& item : j.GetArray()) items.push_back(Convert(item, depth + 1));
    return Value::List(std::move(items));
  }
  Value dict = Value::Dict();
  for (const auto& m : j.GetObject()) {
    dict.Set(std::string(m.name.GetString(), m.name.GetStringLength()), Convert(m.value, depth + 1));
  }
  return dict;
}

}  // namespace

std::string ToJson(const Value& value, bool ensure_ascii, int indent, bool has_indent, const std::string& item_sep,
                   const std::string& key_sep, bool sort_keys) {
  JsonWriter w{ensure_ascii, has_indent, indent, item_sep, key_sep, sort_keys, {}};
  w.Write(value, 0);
  return std::move(w.out);
}

Value FromJson(std::string_view json) {
  // The project's one JSON reader: depth and size bounds, UTF-8 validated, and none of
  // RapidJSON's full-precision strtod (which crashes on some inputs; json_reader.cc).
  rapidjson::Document doc;
  if (absl::Status status = ReadJson(json, "JSON value", doc); !status.ok()) throw Error(std::string(status.message()));
  return Convert(doc, 0);
}

}  // namespace infera::jinja
