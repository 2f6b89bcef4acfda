// tojson and JSON parsing for the Jinja engine (builtins.h).
#include <algorithm>
#include <cmath>

#include "common/json_reader.h"
#include "common/string_escape.h"
#include "jinja/builtins.h"
#include "rapidjson/document.h"

namespace infera::jinja {
namespace {

void AppendJsonString(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  AppendEscaped(out, s, PythonJsonEscapes(ensure_ascii));
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
