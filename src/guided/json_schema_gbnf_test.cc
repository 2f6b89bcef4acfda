// JsonSchemaToGbnf: what it accepts, what it refuses (naming the keyword), the bounds.
// What the grammars match is checked through the engine's matcher in
// guided_grammar_match_test.cc.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "guided/guided_grammar.h"
#include "guided/guided_limits.h"

namespace infera::guided {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Ok(const std::string& schema, bool strict = false) {
  auto g = JsonSchemaToGbnf(schema, strict);
  EXPECT_TRUE(g.ok()) << schema << " → " << g.status();
  return g.ok() ? *g : "";
}

std::string Refused(const std::string& schema) {
  auto g = JsonSchemaToGbnf(schema);
  EXPECT_FALSE(g.ok()) << schema << " compiled to\n" << (g.ok() ? *g : "");
  if (g.ok()) return "";
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(g.status().message());
}

TEST(JsonSchemaGbnfTest, StartsWithRoot) {
  EXPECT_THAT(Ok(R"({"type":"string"})"), ::testing::StartsWith("root ::= "));
}

TEST(JsonSchemaGbnfTest, AnnotationsAreAcceptedAndIgnored) {
  EXPECT_EQ(Ok(R"({"type":"integer"})"),
            Ok(R"({"type":"integer","title":"t","description":"d","examples":[1],"default":2,
                   "$schema":"https://json-schema.org/draft/2020-12/schema","$id":"x",
                   "$comment":"c","deprecated":false,"readOnly":true})"));
}

TEST(JsonSchemaGbnfTest, EveryUnsupportedKeywordIsNamed) {
  for (const char* kw : {"not", "if", "then", "else", "multipleOf", "patternProperties",
                         "propertyNames", "minProperties", "maxProperties", "contains",
                         "minContains", "dependentRequired", "dependentSchemas", "dependencies",
                         "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$anchor",
                         "contentEncoding", "someVendorKeyword"}) {
    std::string schema = std::string(R"({"type":"object",")") + kw + R"(":{}})";
    EXPECT_THAT(Refused(schema), HasSubstr(std::string("'") + kw + "'")) << kw;
  }
  EXPECT_THAT(Refused(R"({"type":"array","uniqueItems":true})"), HasSubstr("'uniqueItems'"));
  Ok(R"({"type":"array","uniqueItems":false})");
}

TEST(JsonSchemaGbnfTest, ErrorsSayWhere) {
  EXPECT_THAT(Refused(R"({"type":"object","properties":{"a":{"type":"array","items":{"not":{}}}}})"),
              HasSubstr("'/properties/a/items'"));
}

TEST(JsonSchemaGbnfTest, Types) {
  for (const char* t : {"object", "array", "string", "number", "integer", "boolean", "null"}) {
    Ok(std::string(R"({"type":")") + t + "\"}");
  }
  Ok(R"({"type":["string","null"],"maxLength":3})");
  EXPECT_THAT(Refused(R"({"type":"text"})"), HasSubstr("unknown type 'text'"));
  EXPECT_THAT(Refused(R"({"type":[]})"), HasSubstr("empty"));
  EXPECT_THAT(Refused(R"(false)"), HasSubstr("accepts nothing"));
  EXPECT_THAT(Refused(R"(3)"), HasSubstr("object or a boolean"));
}

TEST(JsonSchemaGbnfTest, NullableAddsNull) {
  EXPECT_THAT(Ok(R"({"type":"integer","nullable":true})"), HasSubstr("null"));
  EXPECT_THAT(Ok(R"({"type":"integer"})"), Not(HasSubstr("null")));
}

TEST(JsonSchemaGbnfTest, StrictOnlyChangesTheDefaultForExtraProperties) {
  const std::string schema = R"({"type":"object","properties":{"a":{"type":"integer"}}})";
  EXPECT_THAT(Ok(schema), HasSubstr("extra-member"));
  EXPECT_THAT(Ok(schema, /*strict=*/true), Not(HasSubstr("extra-member")));
  EXPECT_THAT(Ok(R"({"type":"object","properties":{"a":{}},"additionalProperties":false})"),
              Not(HasSubstr("extra-member")));
  EXPECT_THAT(Ok(R"({"type":"object","additionalProperties":{"type":"integer"}})", true),
              HasSubstr("extra-member"));
}

TEST(JsonSchemaGbnfTest, ManyOptionalPropertiesStayLinear) {
  std::string schema = R"({"type":"object","properties":{)";
  for (int i = 0; i < 500; ++i) {
    if (i) schema += ",";
    schema += "\"p" + std::to_string(i) + "\":{\"type\":\"integer\"}";
  }
  schema += "}}";
  std::string g = Ok(schema, true);
  EXPECT_LT(g.size(), 200u * 1024) << "quadratic or worse in the optional properties";
}

TEST(JsonSchemaGbnfTest, RequiredMustBeDeclared) {
  EXPECT_THAT(Refused(R"({"type":"object","properties":{"a":{}},"required":["b"]})"),
              HasSubstr("'required' names 'b'"));
}

TEST(JsonSchemaGbnfTest, Combinators) {
  Ok(R"({"anyOf":[{"type":"string"},{"type":"integer"}],"description":"x"})");
  Ok(R"({"allOf":[{"type":"string"}]})");
  EXPECT_THAT(Refused(R"({"allOf":[{"type":"string"},{"maxLength":3}]})"), HasSubstr("'allOf'"));
  Ok(R"({"oneOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]})");
  EXPECT_THAT(Refused(R"({"oneOf":[{"type":"number"},{"type":"integer"}]})"), HasSubstr("'oneOf'"));
  EXPECT_THAT(Refused(R"({"oneOf":[{"type":"string"},{"maxLength":2}]})"), HasSubstr("'oneOf'"));
  // A discriminated union: a required property with distinct consts.
  Ok(R"({"oneOf":[
      {"type":"object","properties":{"kind":{"const":"a"},"x":{"type":"integer"}},"required":["kind"]},
      {"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]})");
  EXPECT_THAT(Refused(R"({"oneOf":[
      {"type":"object","properties":{"kind":{"enum":["a","b"]}},"required":["kind"]},
      {"type":"object","properties":{"kind":{"const":"b"}},"required":["kind"]}]})"),
              HasSubstr("'oneOf'"));
  EXPECT_THAT(Refused(R"({"type":"object","anyOf":[{"required":["a"]}]})"),
              HasSubstr("combined with"));
  EXPECT_THAT(Refused(R"({"anyOf":[]})"), HasSubstr("non-empty"));
}

TEST(JsonSchemaGbnfTest, RefsResolveAndRecurse) {
  std::string g = Ok(R"({"$defs":{"node":{"type":"object","properties":{
      "children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"additionalProperties":false}},
      "$ref":"#/$defs/node"})");
  EXPECT_THAT(g, HasSubstr("ref-node"));
  Ok(R"({"definitions":{"a":{"type":"integer"}},"type":"array","items":{"$ref":"#/definitions/a"}})");
  Ok(R"({"type":"object","properties":{"self":{"$ref":"#"}},"additionalProperties":false})");
  Ok(R"({"$defs":{"a~b/c":{"type":"null"}},"$ref":"#/$defs/a~0b~1c"})");
  EXPECT_THAT(Refused(R"({"$ref":"#/$defs/missing"})"), HasSubstr("does not resolve"));
  EXPECT_THAT(Refused(R"({"$ref":"https://example.com/s.json"})"), HasSubstr("'$ref'"));
  EXPECT_THAT(Refused(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"anyOf":[{"$ref":"#/$defs/a"}]}},
                          "$ref":"#/$defs/a"})"),
              HasSubstr("refers back to itself"));
  EXPECT_THAT(Refused(R"({"$ref":"#/$defs/a","type":"string","$defs":{"a":{}}})"),
              HasSubstr("'$ref' combined with 'type'"));
}

TEST(JsonSchemaGbnfTest, Strings) {
  EXPECT_THAT(Ok(R"({"type":"string","minLength":2,"maxLength":5})"), HasSubstr("{2,5}"));
  for (const char* f : {"date", "time", "date-time", "uuid", "email", "ipv4"}) {
    Ok(std::string(R"({"type":"string","format":")") + f + "\"}");
  }
  EXPECT_THAT(Refused(R"({"type":"string","format":"uri"})"), HasSubstr("'uri' is not supported"));
  EXPECT_THAT(Refused(R"({"type":"string","format":"date","maxLength":3})"), HasSubstr("'format'"));
  Ok(R"({"type":"string","pattern":"^[a-z]+\\d{2}$"})");
  EXPECT_THAT(Refused(R"({"type":"string","pattern":"(a)\\1"})"), HasSubstr("backreference"));
  EXPECT_THAT(Refused(R"({"type":"string","pattern":"a","maxLength":3})"), HasSubstr("'pattern'"));
  EXPECT_THAT(Refused(R"({"type":"string","maxLength":1001})"), HasSubstr("limit of 1000"));
  EXPECT_THAT(Refused(R"({"type":"string","minLength":3,"maxLength":2})"), HasSubstr("minLength"));
  EXPECT_THAT(Refused(R"({"type":"string","maxLength":-1})"), HasSubstr("non-negative integer"));
}

TEST(JsonSchemaGbnfTest, Numbers) {
  Ok(R"({"type":"integer","minimum":-5,"exclusiveMaximum":100})");
  Ok(R"({"type":"integer","minimum":0.5})");  // integers >= 1
  Ok(R"({"type":"integer","minimum":3,"exclusiveMinimum":true})");  // draft 4
  Ok(R"({"type":"number","minimum":0,"maximum":1})");
  EXPECT_THAT(Refused(R"({"type":"number","minimum":0.5})"), HasSubstr("'minimum'"));
  EXPECT_THAT(Refused(R"({"type":"number","exclusiveMaximum":2.5})"), HasSubstr("'exclusiveMaximum'"));
  EXPECT_THAT(Refused(R"({"type":"integer","minimum":1e19})"), HasSubstr("supported range"));
  EXPECT_THAT(Refused(R"({"type":"integer","minimum":5,"maximum":4})"), HasSubstr("no value"));
  EXPECT_THAT(Refused(R"({"type":"integer","multipleOf":2})"), HasSubstr("'multipleOf'"));
}

TEST(JsonSchemaGbnfTest, EnumAndConst) {
  std::string g = Ok(R"({"enum":["a\"b", 1, null, [1,{"k":true}], "é\n"]})");
  EXPECT_THAT(g, HasSubstr(R"("\"a\\\"b\"")"));
  EXPECT_THAT(g, HasSubstr(R"("[1,{\"k\":true}]")"));
  Ok(R"({"const":{"a":[1,2]}})");
  // Values of another type than `type` can never be valid: dropped, and none left is an error.
  EXPECT_THAT(Ok(R"({"type":"string","enum":["x",1]})"), Not(HasSubstr("| \"1\"")));
  EXPECT_THAT(Refused(R"({"type":"string","enum":[1,2]})"), HasSubstr("no value"));
  EXPECT_THAT(Refused(R"({"enum":["a"],"maxLength":3})"), HasSubstr("'enum' combined with"));
}

TEST(JsonSchemaGbnfTest, Arrays) {
  EXPECT_THAT(Ok(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})"),
              HasSubstr("{0,2}"));
  Ok(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})");
  Ok(R"({"type":"array","items":[{"type":"string"}],"additionalItems":{"type":"null"}})");
  EXPECT_THAT(Refused(R"({"type":"array","prefixItems":[{}],"items":false,"minItems":2})"),
              HasSubstr("minItems"));
  EXPECT_THAT(Refused(R"({"type":"array","maxItems":5000})"), HasSubstr("limit"));
}

TEST(JsonSchemaGbnfTest, HostileSchemasAreBounded) {
  // Nesting.
  std::string deep;
  for (int i = 0; i < kMaxSchemaDepth + 5; ++i) deep += R"({"type":"array","items":)";
  deep += "{}";
  for (int i = 0; i < kMaxSchemaDepth + 5; ++i) deep += "}";
  EXPECT_THAT(Refused(deep), HasSubstr("nest deeper"));
  // A huge enum.
  std::string big_enum = R"({"enum":[)";
  for (size_t i = 0; i <= kMaxEnumValues; ++i) big_enum += (i ? "," : "") + std::to_string(i);
  EXPECT_THAT(Refused(big_enum + "]}"), HasSubstr("'enum' has"));
  // Too many properties in all.
  std::string inner = R"({"type":"object","properties":{)";
  for (int i = 0; i < 1100; ++i) inner += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{}";
  inner += "}}";
  EXPECT_THAT(Refused(R"({"type":"array","prefixItems":[)" + inner + "," + inner + "]}"),
              HasSubstr("properties (the limit)"));
  // A long chain of refs.
  std::string chain = R"({"$ref":"#/$defs/d0","$defs":{)";
  for (int i = 0; i < kMaxRefDepth + 5; ++i) {
    chain += "\"d" + std::to_string(i) + "\":{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/d" +
             std::to_string(i + 1) + "\"}},";
  }
  chain += "\"d" + std::to_string(kMaxRefDepth + 5) + "\":{}}}";
  EXPECT_THAT(Refused(chain), HasSubstr("nest deeper"));
  // A grammar over kMaxGrammarBytes: patterns whose every `.` expands.
  std::string dots(10000, '.');
  std::string wide = R"({"type":"object","properties":{)";
  for (int i = 0; i < 4; ++i) wide += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{\"pattern\":\"^" + dots + "$\"}";
  EXPECT_THAT(Refused(wide + "}}"), HasSubstr("bytes (the limit)"));
  // Not JSON at all.
  EXPECT_THAT(Refused("{"), HasSubstr("json_schema"));
}

}  // namespace
}  // namespace infera::guided
