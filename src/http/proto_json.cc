#include "http/proto_json.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteMessage(JsonWriter& w, const Message& message);

std::string Base64(const std::string& in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (size_t i = 0; i < in.size(); i += 3) {
    const size_t n = std::min<size_t>(3, in.size() - i);
    uint32_t chunk = 0;
    for (size_t j = 0; j < 3; ++j) {
      chunk = (chunk << 8) | (j < n ? static_cast<uint8_t>(in[i + j]) : 0);
    }
    for (size_t j = 0; j < 4; ++j) {
      out.push_back(j <= n ? kAlphabet[(chunk >> (18 - 6 * j)) & 63] : '=');
    }
  }
  return out;
}

void WriteDouble(JsonWriter& w, double value) {
  if (std::isnan(value)) return (void)w.String("NaN");
  if (std::isinf(value)) return (void)w.String(value > 0 ? "Infinity" : "-Infinity");
  w.Double(value);
}

// One value of `field`: element `index` of a repeated field, or the singular value (-1).
void WriteValue(JsonWriter& w, const Message& message, const FieldDescriptor* field, int index) {
  const Reflection* r = message.GetReflection();
  const bool rep = index >= 0;
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      w.Int(rep ? r->GetRepeatedInt32(message, field, index) : r->GetInt32(message, field));
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      w.Int64(rep ? r->GetRepeatedInt64(message, field, index) : r->GetInt64(message, field));
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      w.Uint(rep ? r->GetRepeatedUInt32(message, field, index) : r->GetUInt32(message, field));
      break;
    case FieldDescriptor::CPPTYPE_UINT64:
      w.Uint64(rep ? r->GetRepeatedUInt64(message, field, index) : r->GetUInt64(message, field));
      break;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      WriteDouble(w, rep ? r->GetRepeatedDouble(message, field, index)
                         : r->GetDouble(message, field));
      break;
    case FieldDescriptor::CPPTYPE_FLOAT:
      WriteDouble(w, rep ? r->GetRepeatedFloat(message, field, index)
                         : r->GetFloat(message, field));
      break;
    case FieldDescriptor::CPPTYPE_BOOL:
      w.Bool(rep ? r->GetRepeatedBool(message, field, index) : r->GetBool(message, field));
      break;
    case FieldDescriptor::CPPTYPE_ENUM: {
      const int number =
          rep ? r->GetRepeatedEnumValue(message, field, index) : r->GetEnumValue(message, field);
      const auto* value = field->enum_type()->FindValueByNumber(number);
      if (value != nullptr) {
        WriteString(w, value->name());
      } else {
        w.Int(number);
      }
      break;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& s = rep ? r->GetRepeatedStringReference(message, field, index, &scratch)
                                 : r->GetStringReference(message, field, &scratch);
      WriteString(w, field->type() == FieldDescriptor::TYPE_BYTES ? Base64(s) : s);
      break;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      WriteMessage(w, rep ? r->GetRepeatedMessage(message, field, index)
                          : r->GetMessage(message, field));
      break;
  }
}

// A map entry's key as JSON object keys are written: always a string.
std::string MapKey(const Message& entry, const FieldDescriptor* key_field) {
  const Reflection* r = entry.GetReflection();
  switch (key_field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: return r->GetString(entry, key_field);
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(entry, key_field) ? "true" : "false";
    case FieldDescriptor::CPPTYPE_INT32: return std::to_string(r->GetInt32(entry, key_field));
    case FieldDescriptor::CPPTYPE_INT64: return std::to_string(r->GetInt64(entry, key_field));
    case FieldDescriptor::CPPTYPE_UINT32: return std::to_string(r->GetUInt32(entry, key_field));
    case FieldDescriptor::CPPTYPE_UINT64: return std::to_string(r->GetUInt64(entry, key_field));
    default: return "";  // protobuf allows no other key types
  }
}

// A map field: {"key": value, ...}, keys sorted for a stable output.
void WriteMap(JsonWriter& w, const Message& message, const FieldDescriptor* field) {
  const Reflection* r = message.GetReflection();
  const FieldDescriptor* key_field = field->message_type()->map_key();
  const FieldDescriptor* value_field = field->message_type()->map_value();
  std::vector<std::pair<std::string, const Message*>> entries;
  for (int i = 0; i < r->FieldSize(message, field); ++i) {
    const Message& entry = r->GetRepeatedMessage(message, field, i);
    entries.emplace_back(MapKey(entry, key_field), &entry);
  }
  std::sort(entries.begin(), entries.end());
  w.StartObject();
  for (const auto& [key, entry] : entries) {
    WriteString(w, key);
    WriteValue(w, *entry, value_field, -1);
  }
  w.EndObject();
}

void WriteMessage(JsonWriter& w, const Message& message) {
  const Reflection* r = message.GetReflection();
  const auto* descriptor = message.GetDescriptor();
  w.StartObject();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    const bool has_presence = field->containing_oneof() != nullptr ||
                              (!field->is_repeated() &&
                               field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE);
    if (has_presence && !r->HasField(message, field)) continue;
    WriteString(w, field->name());
    if (field->is_map()) {
      WriteMap(w, message, field);
    } else if (field->is_repeated()) {
      w.StartArray();
      for (int j = 0; j < r->FieldSize(message, field); ++j) WriteValue(w, message, field, j);
      w.EndArray();
    } else {
      WriteValue(w, message, field, -1);
    }
  }
  w.EndObject();
}

}  // namespace

std::string ProtoToJson(const Message& message) {
  rapidjson::StringBuffer buffer;
  JsonWriter writer(buffer);
  WriteMessage(writer, message);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace infera
