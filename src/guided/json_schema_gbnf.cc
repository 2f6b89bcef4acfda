// JSON schema → GBNF (docs/structured_output.md, "JSON schema"): one pass over the
// schema, each subschema written as a GBNF expression; objects, arrays and $ref targets
// become named rules, so recursive refs are recursive rules and the grammar grows
// linearly with the schema.
//
// Exactness: every document the grammar accepts is valid against the schema. Where
// JSON allows several spellings of one value the grammar keeps one family (canonical
// integers, numbers without an exponent when bounded, declared properties in schema
// order, extra keys after them): the output is valid, a few valid spellings are not
// produced. Anything that cannot be enforced this way is InvalidArgument naming the
// keyword and where it is.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/sampling_params.h"
#include "common/json_reader.h"
#include "common/json_writer.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "guided/gbnf_text.h"
#include "guided/guided_grammar.h"
#include "guided/guided_limits.h"
#include "guided/json_gbnf_rules.h"
#include "guided/json_key_exclusion.h"
#include "guided/json_string_formats.h"
#include "guided/numeric_range_gbnf.h"
#include "guided/regex_gbnf.h"
#include "guided/regex_parser.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::guided {
namespace {

using Value = rapidjson::Value;

// Keywords that only annotate: accepted and ignored (they constrain nothing).
const std::set<std::string>& Annotations() {
  static const auto* set = new std::set<std::string>{
      "title", "description", "examples", "default", "$schema", "$id", "$comment",
      "deprecated", "readOnly", "writeOnly", "$defs", "definitions", "discriminator",
      "example", "x-order"};
  return *set;
}

// Keywords this compiler enforces.
const std::set<std::string>& Supported() {
  static const auto* set = new std::set<std::string>{
      "type", "enum", "const", "properties", "required", "additionalProperties", "items",
      "prefixItems", "additionalItems", "minItems", "maxItems", "minLength", "maxLength",
      "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
      "anyOf", "oneOf", "allOf", "$ref", "nullable", "uniqueItems"};
  return *set;
}

const char* const kTypes[] = {"object", "array", "string", "number", "integer", "boolean", "null"};

std::string JsonText(const Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  v.Accept(writer);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string JsonQuoted(std::string_view s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buf);
  WriteString(writer, s);
  return std::string(buf.GetString(), buf.GetSize());
}

std::string TypeOf(const Value& v) {
  if (v.IsObject()) return "object";
  if (v.IsArray()) return "array";
  if (v.IsString()) return "string";
  if (v.IsBool()) return "boolean";
  if (v.IsNull()) return "null";
  if (v.IsInt64() || v.IsUint64()) return "integer";
  if (v.IsDouble() && std::isfinite(v.GetDouble()) && v.GetDouble() == std::floor(v.GetDouble())) {
    return "integer";
  }
  return "number";
}

bool IsInteger(double d) { return std::isfinite(d) && d == std::floor(d); }

class Compiler {
 public:
  Compiler(const rapidjson::Document& doc, bool strict) : doc_(doc), strict_(strict) {}

  absl::StatusOr<std::string> Compile() {
    ASSIGN_OR_RETURN(std::string root, Schema(doc_, "", 0));
    rules_.Define("root", root);
    RETURN_IF_ERROR(rules_.CheckSize("json_schema"));
    return rules_.Text();
  }

 private:
  static std::string Where(const std::string& path) { return path.empty() ? "/" : path; }

  absl::Status Error(const std::string& path, std::string_view what) const {
    return absl::InvalidArgumentError(StrCat("json_schema at '", Where(path), "': ", what));
  }
  absl::Status Unsupported(const std::string& path, std::string_view keyword,
                           std::string_view why = "is not supported") const {
    return Error(path, StrCat("keyword '", keyword, "' ", why));
  }

  // A GBNF expression for the values `s` accepts.
  absl::StatusOr<std::string> Schema(const Value& s, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth) {
      return Error(path, StrCat("schemas nest deeper than the limit of ", kMaxSchemaDepth));
    }
    RETURN_IF_ERROR(rules_.CheckSize("json_schema"));
    if (s.IsBool()) {
      if (s.GetBool()) return JsonValue(rules_);
      return Error(path, "the schema false accepts nothing");
    }
    if (!s.IsObject()) return Error(path, "a schema must be an object or a boolean");
    std::vector<std::string> constraining;  // the keywords that are not annotations
    for (auto it = s.MemberBegin(); it != s.MemberEnd(); ++it) {
      std::string key(it->name.GetString(), it->name.GetStringLength());
      if (Annotations().count(key)) continue;
      if (!Supported().count(key)) return Unsupported(path, key);
      constraining.push_back(key);
    }
    if (constraining.empty()) return JsonValue(rules_);  // {}: any value
    auto only = [&](const std::string& keyword, const std::set<std::string>& allowed) -> absl::Status {
      for (const auto& k : constraining) {
        if (k != keyword && !allowed.count(k)) {
          return Unsupported(path, keyword, StrCat("combined with '", k, "' is not supported"));
        }
      }
      return absl::OkStatus();
    };
    if (s.HasMember("uniqueItems") && !(s["uniqueItems"].IsBool() && !s["uniqueItems"].GetBool())) {
      return Unsupported(path, "uniqueItems", "true is not supported");
    }
    if (s.HasMember("$ref")) {
      RETURN_IF_ERROR(only("$ref", {}));
      return Ref(s["$ref"], path, depth);
    }
    for (const char* combinator : {"anyOf", "oneOf", "allOf"}) {
      if (!s.HasMember(combinator)) continue;
      RETURN_IF_ERROR(only(combinator, {}));
      return Combinator(combinator, s[combinator], path, depth);
    }
    if (s.HasMember("const") || s.HasMember("enum")) {
      const char* keyword = s.HasMember("const") ? "const" : "enum";
      RETURN_IF_ERROR(only(keyword, {"type", "nullable"}));
      return Enum(s, keyword, path);
    }
    ASSIGN_OR_RETURN(std::set<std::string> types, Types(s, path));
    std::vector<std::string> alts;
    // Direct refs are only a cycle until something consumes input: an object or array.
    for (const char* type : kTypes) {
      if (!types.count(type)) continue;
      std::string t = type;
      if (t == "integer" && types.count("number")) continue;  // number covers it, unless bounded
      if (t == "object" || t == "array") {
        std::set<std::string> saved;
        saved.swap(direct_refs_);
        auto expr = t == "object" ? Object(s, path, depth) : Array(s, path, depth);
        direct_refs_.swap(saved);
        if (!expr.ok()) return expr.status();
        alts.push_back(*expr);
      } else if (t == "string") {
        ASSIGN_OR_RETURN(std::string expr, String(s, path));
        alts.push_back(expr);
      } else if (t == "number" || t == "integer") {
        ASSIGN_OR_RETURN(std::string expr, Number(s, path, t == "integer"));
        alts.push_back(expr);
      } else if (t == "boolean") {
        alts.push_back(JsonBoolean(rules_));
      } else {
        alts.push_back(JsonNull(rules_));
      }
    }
    if (alts.size() == 1) return alts[0];
    return StrCat("(", StrJoin(alts, " | "), ")");
  }

  // The JSON types `s` allows: its `type` (plus null when nullable), else the types its
  // keywords speak of (a schema with `properties` means an object, as xgrammar and
  // llama.cpp read it), else any.
  absl::StatusOr<std::set<std::string>> Types(const Value& s, const std::string& path) {
    std::set<std::string> types;
    if (s.HasMember("type")) {
      const Value& t = s["type"];
      auto add = [&](const Value& v) -> absl::Status {
        if (!v.IsString()) return Error(path, "'type' must be a string or an array of strings");
        std::string name(v.GetString(), v.GetStringLength());
        bool known = false;
        for (const char* k : kTypes) known |= name == k;
        if (!known) return Error(path, StrCat("unknown type '", name, "'"));
        types.insert(name);
        return absl::OkStatus();
      };
      if (t.IsArray()) {
        if (t.Empty()) return Error(path, "'type' is an empty array (nothing is valid)");
        for (const auto& v : t.GetArray()) RETURN_IF_ERROR(add(v));
      } else {
        RETURN_IF_ERROR(add(t));
      }
    } else {
      for (const char* k : {"properties", "required", "additionalProperties"}) {
        if (s.HasMember(k)) types.insert("object");
      }
      for (const char* k : {"items", "prefixItems", "additionalItems", "minItems", "maxItems"}) {
        if (s.HasMember(k)) types.insert("array");
      }
      for (const char* k : {"minLength", "maxLength", "pattern", "format"}) {
        if (s.HasMember(k)) types.insert("string");
      }
      for (const char* k : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}) {
        if (s.HasMember(k)) types.insert("number");
      }
      if (types.empty()) {
        for (const char* k : kTypes) types.insert(k);
      }
    }
    if (s.HasMember("nullable")) {
      if (!s["nullable"].IsBool()) return Error(path, "'nullable' must be a boolean");
      if (s["nullable"].GetBool()) types.insert("null");
    }
    return types;
  }

  absl::StatusOr<std::string> Enum(const Value& s, const char* keyword, const std::string& path) {
    std::optional<std::set<std::string>> types;
    if (s.HasMember("type")) {
      ASSIGN_OR_RETURN(types, Types(s, path));
    } else if (s.HasMember("nullable") && s["nullable"].IsBool() && s["nullable"].GetBool()) {
      // nullable without type: the values plus null.
    }
    std::vector<const Value*> values;
    if (std::string_view(keyword) == "const") {
      values.push_back(&s["const"]);
    } else {
      const Value& e = s["enum"];
      if (!e.IsArray()) return Error(path, "'enum' must be an array");
      if (e.Size() > kMaxEnumValues) {
        return Error(path, StrCat("'enum' has ", e.Size(), " values, more than the limit of ",
                                  kMaxEnumValues));
      }
      for (const auto& v : e.GetArray()) values.push_back(&v);
    }
    std::vector<std::string> alts;
    std::set<std::string> seen;
    for (const Value* v : values) {
      if (types) {
        std::string t = TypeOf(*v);
        bool ok = types->count(t) || (t == "integer" && types->count("number"));
        if (!ok) continue;  // not of the schema's type: never valid
      }
      std::string text = JsonText(*v);
      if (seen.insert(text).second) alts.push_back(GbnfLiteral(text));
    }
    if (s.HasMember("nullable") && s["nullable"].IsBool() && s["nullable"].GetBool() &&
        seen.insert("null").second) {
      alts.push_back(GbnfLiteral("null"));
    }
    if (alts.empty()) return Error(path, StrCat("no value of '", keyword, "' is valid"));
    if (alts.size() == 1) return alts[0];
    return StrCat("(", StrJoin(alts, " | "), ")");
  }

  absl::StatusOr<std::string> Combinator(const std::string& keyword, const Value& list,
                                         const std::string& path, int depth) {
    if (!list.IsArray() || list.Empty()) {
      return Error(path, StrCat("'", keyword, "' must be a non-empty array"));
    }
    if (list.Size() > kMaxAlternatives) {
      return Error(path, StrCat("'", keyword, "' has ", list.Size(),
                                " schemas, more than the limit of ", kMaxAlternatives));
    }
    if (keyword == "allOf") {
      // One schema is that schema; an intersection of several cannot be written exactly.
      if (list.Size() != 1) {
        return Unsupported(path, "allOf", "with more than one schema is not supported");
      }
      return Schema(list[0], StrCat(path, "/allOf/0"), depth + 1);
    }
    if (keyword == "oneOf") RETURN_IF_ERROR(CheckDisjoint(list, path));
    std::vector<std::string> alts;
    for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
      ASSIGN_OR_RETURN(std::string expr, Schema(list[i], StrCat(path, "/", keyword, "/", i), depth + 1));
      alts.push_back(expr);
    }
    if (alts.size() == 1) return alts[0];
    return StrCat("(", StrJoin(alts, " | "), ")");
  }

  // The follow-the-ref view of a schema, for oneOf's disjointness checks.
  const Value* Deref(const Value* s, int hops = 0) {
    while (s && s->IsObject() && s->HasMember("$ref") && (*s)["$ref"].IsString() && hops++ < kMaxRefDepth) {
      s = Resolve(std::string((*s)["$ref"].GetString(), (*s)["$ref"].GetStringLength()));
    }
    return s;
  }

  // oneOf is exact as anyOf when no value can match two branches: the branches have
  // disjoint types, or all are objects with a common required property whose const /
  // enum values differ between branches (a discriminated union).
  absl::Status CheckDisjoint(const Value& list, const std::string& path) {
    auto explicit_types = [&](const Value* s) -> std::optional<std::set<std::string>> {
      if (!s || !s->IsObject()) return std::nullopt;
      if (s->HasMember("const") || s->HasMember("enum")) {
        std::set<std::string> t;
        if (s->HasMember("const")) t.insert(TypeOf((*s)["const"]));
        if (s->HasMember("enum") && (*s)["enum"].IsArray()) {
          for (const auto& v : (*s)["enum"].GetArray()) t.insert(TypeOf(v));
        }
        return t;
      }
      if (!s->HasMember("type")) return std::nullopt;
      auto types = Types(*s, path);
      if (!types.ok()) return std::nullopt;
      if (types->count("number")) types->insert("integer");
      return *types;
    };
    bool types_disjoint = true;
    std::set<std::string> seen;
    for (const auto& branch : list.GetArray()) {
      auto t = explicit_types(Deref(&branch));
      if (!t) {
        types_disjoint = false;
        break;
      }
      for (const auto& name : *t) {
        if (!seen.insert(name).second) types_disjoint = false;
      }
    }
    if (types_disjoint) return absl::OkStatus();
    // A discriminator: a property required in every branch with disjoint values.
    const Value* first = Deref(&list[0]);
    if (first && first->IsObject() && first->HasMember("required") && first->HasMember("properties") &&
        first->HasMember("required") && (*first)["required"].IsArray()) {
      for (const auto& name : (*first)["required"].GetArray()) {
        if (!name.IsString()) continue;
        std::set<std::string> values;
        bool ok = true;
        for (const auto& branch : list.GetArray()) {
          const Value* b = Deref(&branch);
          if (!b || !b->IsObject() || !b->HasMember("properties") || !b->HasMember("required") ||
              !(*b)["properties"].IsObject() || !(*b)["required"].IsArray()) {
            ok = false;
            break;
          }
          bool required = false;
          for (const auto& r : (*b)["required"].GetArray()) required |= r == name;
          auto p = (*b)["properties"].FindMember(name);
          if (!required || p == (*b)["properties"].MemberEnd()) {
            ok = false;
            break;
          }
          const Value* prop = Deref(&p->value);
          std::vector<std::string> texts;
          if (prop && prop->IsObject() && prop->HasMember("const")) {
            texts.push_back(JsonText((*prop)["const"]));
          } else if (prop && prop->IsObject() && prop->HasMember("enum") && (*prop)["enum"].IsArray()) {
            for (const auto& v : (*prop)["enum"].GetArray()) texts.push_back(JsonText(v));
          } else {
            ok = false;
            break;
          }
          for (const auto& t : texts) ok &= values.insert(t).second;
          if (!ok) break;
        }
        if (ok) return absl::OkStatus();
      }
    }
    return Unsupported(path, "oneOf",
                       "is only supported when its schemas cannot both match (distinct types, or "
                       "a required property with distinct const/enum values); use anyOf");
  }

  // The schema a local reference ("#", "#/$defs/x", any JSON pointer in the document)
  // points at, or null.
  const Value* Resolve(const std::string& ref) {
    if (ref.empty() || ref[0] != '#') return nullptr;
    const Value* v = &doc_;
    size_t pos = 1;
    if (pos < ref.size() && ref[pos] != '/') return nullptr;
    while (pos < ref.size()) {
      size_t next = ref.find('/', pos + 1);
      std::string token = ref.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
      std::string unescaped;
      for (size_t i = 0; i < token.size(); ++i) {
        if (token[i] == '~' && i + 1 < token.size()) {
          unescaped += token[i + 1] == '1' ? '/' : '~';
          ++i;
        } else {
          unescaped += token[i];
        }
      }
      if (v->IsObject()) {
        auto it = v->FindMember(Value(unescaped.c_str(), static_cast<rapidjson::SizeType>(unescaped.size())));
        if (it == v->MemberEnd()) return nullptr;
        v = &it->value;
      } else if (v->IsArray()) {
        char* end = nullptr;
        unsigned long i = std::strtoul(unescaped.c_str(), &end, 10);
        if (unescaped.empty() || *end != '\0' || i >= v->Size()) return nullptr;
        v = &(*v)[static_cast<rapidjson::SizeType>(i)];
      } else {
        return nullptr;
      }
      if (next == std::string::npos) break;
      pos = next;
    }
    return v;
  }

  absl::StatusOr<std::string> Ref(const Value& ref_value, const std::string& path, int depth) {
    if (!ref_value.IsString()) return Error(path, "'$ref' must be a string");
    std::string ref(ref_value.GetString(), ref_value.GetStringLength());
    if (ref.empty() || ref[0] != '#') {
      return Unsupported(path, "$ref", StrCat("'", ref, "' is not supported (only refs inside the schema: #/$defs/..., #/definitions/..., #)"));
    }
    std::string name = rules_.Named("ref:" + ref);
    if (!name.empty()) {
      if (direct_refs_.count(ref)) {
        return Error(path, StrCat("'$ref' '", ref, "' refers back to itself before any object or array (an endless value)"));
      }
      return name;
    }
    const Value* target = Resolve(ref);
    if (!target) return Error(path, StrCat("'$ref' '", ref, "' does not resolve"));
    if (ref_depth_ >= kMaxRefDepth) {
      return Error(path, StrCat("$refs nest deeper than the limit of ", kMaxRefDepth));
    }
    size_t slash = ref.rfind('/');
    name = rules_.Reserve(StrCat("ref-", slash == std::string::npos ? "root" : ref.substr(slash + 1)));
    rules_.Name("ref:" + ref, name);
    ++ref_depth_;
    direct_refs_.insert(ref);
    auto body = Schema(*target, ref.substr(1), depth + 1);
    direct_refs_.erase(ref);
    --ref_depth_;
    if (!body.ok()) return body.status();
    rules_.Define(name, *body);
    return name;
  }

  absl::StatusOr<std::optional<long>> Count(const Value& s, const char* keyword, const std::string& path) {
    if (!s.HasMember(keyword)) return std::optional<long>();
    const Value& v = s[keyword];
    if (!v.IsNumber() || !IsInteger(v.GetDouble()) || v.GetDouble() < 0) {
      return Error(path, StrCat("'", keyword, "' must be a non-negative integer"));
    }
    if (v.GetDouble() > static_cast<double>(kMaxRepetition)) {
      return Error(path, StrCat("'", keyword, "' ", JsonText(v), " is above the limit of ", kMaxRepetition));
    }
    return std::optional<long>(static_cast<long>(v.GetDouble()));
  }

  absl::StatusOr<std::string> String(const Value& s, const std::string& path) {
    const std::string q = "\"\\\"\"";
    std::string chr = JsonStringChar(rules_);
    bool has_length = s.HasMember("minLength") || s.HasMember("maxLength");
    if (s.HasMember("format")) {
      if (!s["format"].IsString()) return Error(path, "'format' must be a string");
      std::string format = s["format"].GetString();
      if (has_length || s.HasMember("pattern")) {
        return Unsupported(path, "format", "combined with minLength/maxLength/pattern is not supported");
      }
      std::string body = StringFormatGbnf(format);
      if (body.empty()) return Unsupported(path, "format", StrCat("'", format, "' is not supported"));
      return rules_.Add(StrCat("fmt-", format), StrCat(q, " ", body, " ", q));
    }
    if (s.HasMember("pattern")) {
      if (!s["pattern"].IsString()) return Error(path, "'pattern' must be a string");
      if (has_length) {
        return Unsupported(path, "pattern", "combined with minLength/maxLength is not supported");
      }
      auto parsed = ParseRegex(std::string_view(s["pattern"].GetString(), s["pattern"].GetStringLength()));
      if (!parsed.ok()) return Error(path, StrCat("'pattern' ", parsed.status().message()));
      // JSON schema patterns match anywhere (re.search) unless anchored.
      std::string body = RegexNodeToGbnf(parsed->root, RegexTarget::kJsonStringContent);
      std::string head = parsed->anchored_start ? "" : StrCat(chr, "* ");
      std::string tail = parsed->anchored_end ? "" : StrCat(" ", chr, "*");
      return rules_.Add("str-pattern", StrCat(q, " ", head, GbnfGroup(body), tail, " ", q));
    }
    if (has_length) {
      ASSIGN_OR_RETURN(std::optional<long> min, Count(s, "minLength", path));
      ASSIGN_OR_RETURN(std::optional<long> max, Count(s, "maxLength", path));
      if (min && max && *min > *max) return Error(path, "minLength is above maxLength");
      return rules_.Add("str-len", StrCat(q, " ", GbnfRepeat(chr, min.value_or(0), max.value_or(-1)), " ", q));
    }
    return JsonString(rules_);
  }

  // A bound keyword's value, or nullopt; `exclusive` for the draft-4 boolean form.
  absl::StatusOr<std::optional<double>> Bound(const Value& s, const char* keyword, const std::string& path) {
    if (!s.HasMember(keyword)) return std::optional<double>();
    const Value& v = s[keyword];
    if (v.IsBool()) return std::optional<double>();  // draft 4: a flag on minimum/maximum
    if (!v.IsNumber() || !std::isfinite(v.GetDouble())) {
      return Error(path, StrCat("'", keyword, "' must be a number"));
    }
    if (std::fabs(v.GetDouble()) > static_cast<double>(kMaxAbsBound)) {
      return Error(path, StrCat("'", keyword, "' ", JsonText(v), " is outside the supported range of ±1e18"));
    }
    return std::optional<double>(v.GetDouble());
  }

  absl::StatusOr<std::string> Number(const Value& s, const std::string& path, bool integer) {
    ASSIGN_OR_RETURN(std::optional<double> minimum, Bound(s, "minimum", path));
    ASSIGN_OR_RETURN(std::optional<double> maximum, Bound(s, "maximum", path));
    ASSIGN_OR_RETURN(std::optional<double> ex_min, Bound(s, "exclusiveMinimum", path));
    ASSIGN_OR_RETURN(std::optional<double> ex_max, Bound(s, "exclusiveMaximum", path));
    auto flag = [&](const char* k) { return s.HasMember(k) && s[k].IsBool() && s[k].GetBool(); };
    // Fold into one (value, exclusive) per side, the tighter one winning.
    std::optional<std::pair<double, bool>> lo, hi;
    const char* lo_key = "minimum";
    const char* hi_key = "maximum";
    if (minimum) lo = {{*minimum, flag("exclusiveMinimum")}};
    if (ex_min && (!lo || *ex_min >= lo->first)) {
      lo = {{*ex_min, true}};
      lo_key = "exclusiveMinimum";
    }
    if (maximum) hi = {{*maximum, flag("exclusiveMaximum")}};
    if (ex_max && (!hi || *ex_max <= hi->first)) {
      hi = {{*ex_max, true}};
      hi_key = "exclusiveMaximum";
    }
    if (!lo && !hi) return integer ? JsonInteger(rules_) : JsonNumber(rules_);
    std::string expr;
    if (integer) {
      std::optional<int64_t> ilo, ihi;
      if (lo) ilo = static_cast<int64_t>(lo->second ? std::floor(lo->first) + 1 : std::ceil(lo->first));
      if (hi) ihi = static_cast<int64_t>(hi->second ? std::ceil(hi->first) - 1 : std::floor(hi->first));
      expr = IntegerRangeGbnf(ilo, ihi);
    } else {
      const char* why = " on a number is not supported (only integer bounds are enforced)";
      if (lo && !IsInteger(lo->first)) return Unsupported(path, lo_key, StrCat(JsonText(s[lo_key]), why));
      if (hi && !IsInteger(hi->first)) return Unsupported(path, hi_key, StrCat(JsonText(s[hi_key]), why));
      std::optional<NumberBound> nlo, nhi;
      if (lo) nlo = NumberBound{static_cast<int64_t>(lo->first), lo->second};
      if (hi) nhi = NumberBound{static_cast<int64_t>(hi->first), hi->second};
      expr = NumberRangeGbnf(nlo, nhi);
    }
    if (expr.empty()) return Error(path, "the bounds admit no value (minimum above maximum)");
    return rules_.Add(integer ? "int-range" : "number-range", expr);
  }

  absl::StatusOr<std::string> Object(const Value& s, const std::string& path, int depth) {
    std::string ws = JsonWs(rules_);
    std::vector<std::string> names;
    std::vector<std::string> items;  // `"name" ws ":" ws value ws` per property
    std::set<std::string> required;
    if (s.HasMember("required")) {
      if (!s["required"].IsArray()) return Error(path, "'required' must be an array");
      for (const auto& r : s["required"].GetArray()) {
        if (!r.IsString()) return Error(path, "'required' must hold strings");
        required.insert(std::string(r.GetString(), r.GetStringLength()));
      }
    }
    if (s.HasMember("properties")) {
      const Value& props = s["properties"];
      if (!props.IsObject()) return Error(path, "'properties' must be an object");
      for (auto it = props.MemberBegin(); it != props.MemberEnd(); ++it) {
        if (++total_properties_ > kMaxTotalProperties) {
          return Error(path, StrCat("the schema has more than ", kMaxTotalProperties, " properties (the limit)"));
        }
        std::string name(it->name.GetString(), it->name.GetStringLength());
        if (name.size() > kMaxPropertyNameBytes) {
          return Error(path, StrCat("a property name is longer than ", kMaxPropertyNameBytes, " bytes (the limit)"));
        }
        ASSIGN_OR_RETURN(std::string value, Schema(it->value, StrCat(path, "/properties/", name), depth + 1));
        names.push_back(name);
        items.push_back(StrCat(GbnfLiteral(JsonQuoted(name)), " ", ws, " \":\" ", ws, " ", value, " ", ws));
      }
    }
    for (const auto& r : required) {
      bool declared = false;
      for (const auto& n : names) declared |= n == r;
      if (!declared) {
        return Unsupported(path, "required", StrCat("names '", r, "', which is not in 'properties'"));
      }
    }
    // Extra properties: explicit additionalProperties, else allowed unless strict.
    std::string extra;  // `key ws ":" ws value ws`, or "" when none are allowed
    bool extra_allowed = !strict_;
    const Value* extra_schema = nullptr;
    if (s.HasMember("additionalProperties")) {
      const Value& a = s["additionalProperties"];
      if (a.IsBool()) {
        extra_allowed = a.GetBool();
      } else if (a.IsObject()) {
        extra_allowed = true;
        extra_schema = &a;
      } else {
        return Error(path, "'additionalProperties' must be a boolean or a schema");
      }
    }
    if (extra_allowed) {
      std::string value = JsonValue(rules_);
      if (extra_schema) {
        ASSIGN_OR_RETURN(value, Schema(*extra_schema, StrCat(path, "/additionalProperties"), depth + 1));
      }
      std::string key = names.empty() ? JsonString(rules_) : JsonKeyOtherThan(rules_, names);
      extra = rules_.Add("extra-member", StrCat(key, " ", ws, " \":\" ", ws, " ", value, " ", ws));
    }
    // Properties in schema order, the optional ones optional, with the commas right:
    // after[i] follows something already written (each member preceded by ","),
    // first[i] is where nothing has been written yet. Linear in the property count.
    std::string after = extra.empty() ? "" : StrCat("(\",\" ", ws, " ", extra, ")*");
    std::string first = extra.empty() ? "" : StrCat("(", extra, " (\",\" ", ws, " ", extra, ")*)?");
    auto named = [&](const std::string& hint, const std::string& body) {
      return body.size() <= 40 ? body : rules_.Add(hint, body);
    };
    for (size_t i = items.size(); i-- > 0;) {
      std::string comma_item = StrCat("\",\" ", ws, " ", items[i]);
      std::string seq_after = after.empty() ? "" : StrCat(" ", after);
      std::string new_after, new_first;
      if (required.count(names[i])) {
        new_after = StrCat(comma_item, seq_after);
        new_first = StrCat(items[i], seq_after);
      } else {
        new_after = StrCat("(", comma_item, ")?", seq_after);
        new_first = first.empty() ? StrCat("(", items[i], seq_after, ")?")
                                  : StrCat("(", items[i], seq_after, " | ", first, ")");
      }
      if (i > 0) after = named("obj-rest", new_after);  // the first property's is unused
      first = named("obj-from", new_first);
    }
    std::string body = StrCat("\"{\" ", ws, first.empty() ? "" : " ", first, " \"}\"");
    return rules_.Add("object", body);
  }

  absl::StatusOr<std::string> Array(const Value& s, const std::string& path, int depth) {
    std::string ws = JsonWs(rules_);
    std::vector<std::string> prefix;
    const Value* prefix_list = nullptr;
    std::string prefix_key;
    if (s.HasMember("prefixItems")) {
      prefix_list = &s["prefixItems"];
      prefix_key = "prefixItems";
    } else if (s.HasMember("items") && s["items"].IsArray()) {
      prefix_list = &s["items"];  // draft 4-2019: the tuple form
      prefix_key = "items";
    }
    if (prefix_list) {
      if (!prefix_list->IsArray()) return Error(path, StrCat("'", prefix_key, "' must be an array"));
      if (prefix_list->Size() > kMaxRepetition) {
        return Error(path, StrCat("'", prefix_key, "' has more than ", kMaxRepetition, " schemas (the limit)"));
      }
      for (rapidjson::SizeType i = 0; i < prefix_list->Size(); ++i) {
        ASSIGN_OR_RETURN(std::string e, Schema((*prefix_list)[i], StrCat(path, "/", prefix_key, "/", i), depth + 1));
        prefix.push_back(StrCat(e, " ", ws));
      }
    }
    // The items after the prefix.
    const Value* rest = nullptr;
    std::string rest_key;
    if (prefix_key == "items") {
      if (s.HasMember("additionalItems")) { rest = &s["additionalItems"]; rest_key = "additionalItems"; }
    } else if (s.HasMember("items")) {
      rest = &s["items"];
      rest_key = "items";
    }
    if (s.HasMember("additionalItems") && prefix_key != "items") {
      return Unsupported(path, "additionalItems", "without an 'items' array is not supported");
    }
    std::string rest_item;  // "" when no item may follow the prefix
    if (!rest || !(rest->IsBool() && !rest->GetBool())) {
      std::string e = JsonValue(rules_);
      if (rest && !(rest->IsBool() && rest->GetBool())) {
        ASSIGN_OR_RETURN(e, Schema(*rest, StrCat(path, "/", rest_key), depth + 1));
      }
      rest_item = StrCat(e, " ", ws);
    }
    ASSIGN_OR_RETURN(std::optional<long> min_items, Count(s, "minItems", path));
    ASSIGN_OR_RETURN(std::optional<long> max_items_opt, Count(s, "maxItems", path));
    long min = min_items.value_or(0);
    long max = max_items_opt.value_or(-1);
    long p = static_cast<long>(prefix.size());
    if (rest_item.empty() && (max < 0 || max > p)) max = p;
    if (max >= 0 && min > max) {
      return Error(path, "minItems is above the number of items the array can hold");
    }
    if (max == 0) return rules_.Add("array", StrCat("\"[\" ", ws, " \"]\""));
    auto item = [&](long k) { return k < p ? prefix[k] : rest_item; };
    // tail: what follows the first j items (j >= 1).
    std::string tail;
    long j_start = std::min(p, max < 0 ? p : max);
    if (max < 0 || max > p) {  // the items after the prefix, counted
      long from = std::max(p, 1L);
      long lo = std::max(min - from, 0L);
      long hi = max < 0 ? -1 : max - from;
      std::string rep = GbnfRepeat(StrCat("\",\" ", ws, " ", rest_item), lo, hi);
      tail = hi == 0 ? "" : rep;
      j_start = from;
      if (p == 0) j_start = 1;
    }
    for (long j = j_start - 1; j >= 1; --j) {
      std::string step = StrCat("\",\" ", ws, " ", item(j), tail.empty() ? "" : " ", tail);
      tail = j < min ? step : StrCat("(", step, ")?");
      if (tail.size() > 40) tail = rules_.Add("array-rest", tail);
    }
    std::string content = StrCat(item(0), tail.empty() ? "" : " ", tail);
    if (min == 0) content = StrCat("(", content, ")?");
    return rules_.Add("array", StrCat("\"[\" ", ws, " ", content, " \"]\""));
  }

  const rapidjson::Document& doc_;
  const bool strict_;
  GbnfRules rules_;
  std::set<std::string> direct_refs_;  // refs entered since the last object or array
  int ref_depth_ = 0;
  size_t total_properties_ = 0;
};

}  // namespace

absl::StatusOr<std::string> JsonSchemaToGbnf(std::string_view schema_json, bool strict) {
  rapidjson::Document doc;
  JsonLimits limits;
  limits.max_bytes = kMaxGrammarBytes;
  RETURN_IF_ERROR(ReadJson(schema_json, "json_schema", doc, limits));
  return Compiler(doc, strict).Compile();
}

}  // namespace infera::guided
