// The compilers' grammars through the engine's own GBNF parser and matcher
// (src/grammar): every grammar parses, accepts the valid documents it should and
// refuses the invalid ones — exhaustively over small numeric ranges.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "grammar/compiled_grammar.h"
#include "grammar/grammar_matcher.h"
#include "guided/guided_grammar.h"
#include "guided/guided_limits.h"

namespace infera::guided {
namespace {

using grammar::CompiledGrammar;
constexpr int kManyProperties = 512;  // kMaxObjectProperties
using grammar::GrammarMatcher;

class Language {
 public:
  explicit Language(const absl::StatusOr<std::string>& gbnf) {
    EXPECT_TRUE(gbnf.ok()) << gbnf.status();
    if (!gbnf.ok()) return;
    text_ = *gbnf;
    auto compiled = CompiledGrammar::Compile(text_, nullptr);
    EXPECT_TRUE(compiled.ok()) << compiled.status() << "\n" << text_;
    if (compiled.ok()) compiled_ = *compiled;
  }
  bool Accepts(std::string_view text) const {
    if (!compiled_) return false;
    GrammarMatcher m(compiled_);
    return m.AcceptBytes(text) && m.CanEnd();
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::shared_ptr<const CompiledGrammar> compiled_;
};

Language Schema(const std::string& schema, bool strict = false) {
  return Language(JsonSchemaToGbnf(schema, strict));
}

void ExpectLanguage(const Language& l, const std::vector<std::string>& yes,
                    const std::vector<std::string>& no) {
  for (const auto& y : yes) EXPECT_TRUE(l.Accepts(y)) << "should accept " << y << "\n" << l.text();
  for (const auto& n : no) EXPECT_FALSE(l.Accepts(n)) << "should refuse " << n << "\n" << l.text();
}

TEST(GuidedGrammarMatchTest, IntegerRangesAreExact) {
  struct Case { std::optional<long> lo, hi; };
  for (Case c : std::vector<Case>{{0, 0}, {-5, 5}, {1, 9}, {10, 99}, {7, 123}, {-123, -7},
                                  {95, 105}, {998, 1002}, {-1002, -998}, {std::nullopt, 5},
                                  {-3, std::nullopt}, {std::nullopt, -12}, {13, std::nullopt},
                                  {0, std::nullopt}}) {
    for (bool exclusive : {false, true}) {
      std::string schema = R"({"type":"integer")";
      if (c.lo) schema += std::string(exclusive ? ",\"exclusiveMinimum\":" : ",\"minimum\":") + std::to_string(*c.lo);
      if (c.hi) schema += std::string(exclusive ? ",\"exclusiveMaximum\":" : ",\"maximum\":") + std::to_string(*c.hi);
      schema += "}";
      if (exclusive && c.lo && c.hi && *c.hi - *c.lo < 2) continue;
      Language l = Schema(schema);
      for (long x = c.lo.value_or(-300) - 30; x <= c.hi.value_or(300) + 30; ++x) {
        bool valid = (!c.lo || (exclusive ? x > *c.lo : x >= *c.lo)) &&
                     (!c.hi || (exclusive ? x < *c.hi : x <= *c.hi));
        EXPECT_EQ(l.Accepts(std::to_string(x)), valid) << schema << " x=" << x;
      }
      for (const char* junk : {"007", "-0", "", "-", "1.0", "+1", "1e2"}) {
        EXPECT_FALSE(l.Accepts(junk)) << schema << " " << junk;
      }
    }
  }
}

TEST(GuidedGrammarMatchTest, NumberRangesAreExact) {
  ExpectLanguage(Schema(R"({"type":"number","minimum":0,"maximum":1})"),
                 {"0", "0.5", "1", "1.0", "1.000", "0.999", "0.0"},
                 {"-0.1", "1.01", "2", "-1", "1e0", "01"});
  ExpectLanguage(Schema(R"({"type":"number","exclusiveMinimum":-2,"exclusiveMaximum":3})"),
                 {"-1.999", "-1", "0", "2.999", "-0.5"}, {"-2", "-2.0", "3", "3.0", "-2.5"});
  ExpectLanguage(Schema(R"({"type":"number","exclusiveMinimum":0})"),
                 {"0.001", "1", "12345.5"}, {"0", "0.000", "-1"});
  ExpectLanguage(Schema(R"({"type":"number","maximum":-1})"),
                 {"-1", "-1.0", "-7.25"}, {"-0.5", "0", "-1.5e0"});
  ExpectLanguage(Schema(R"({"type":"number"})"),
                 {"0", "-1.5e+3", "3.25E-2", "10"}, {"01", "1.", ".5", "+1", "-"});
}

TEST(GuidedGrammarMatchTest, ObjectsInSchemaOrderWithOptionalProperties) {
  Language l = Schema(R"({"type":"object","properties":{
      "a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},
      "required":["b"],"additionalProperties":false})");
  ExpectLanguage(l,
                 {R"({"b":""})", R"({"a":1,"b":"x"})", R"({"b":"x","c":true})",
                  R"({"a":1,"b":"x","c":false})", "{ \"a\" : 1 ,\n  \"b\": \"x\"}"},
                 {R"({})", R"({"a":1})", R"({"b":"x","a":1})", R"({"b":"x",})", R"({,"b":"x"})",
                  R"({"b":"x","d":1})", R"({"b":1})", R"({"a":1,"b":"x","c":false,"c":true})"});
  ExpectLanguage(Schema(R"({"type":"object","properties":{"a":{},"b":{}}})", /*strict=*/true),
                 {"{}", R"({"a":[1,{"x":null}]})", R"({"b":"s"})", R"({"a":1,"b":2})"},
                 {R"({"z":1})", R"({"b":1,"a":2})"});
}

// Every optional property's key starts with '"': the matcher carries one parse stack per
// property until the key tells them apart (its cap is grammar::kMaxStacks).
TEST(GuidedGrammarMatchTest, ManyOptionalPropertiesStayWithinTheMatchersCaps) {
  std::string schema = R"({"type":"object","properties":{)";
  for (int i = 0; i < kManyProperties; ++i) {
    schema += (i ? "," : "") + std::string("\"p") + std::to_string(i) + "\":{\"type\":\"integer\"}";
  }
  schema += R"(},"additionalProperties":{"type":"null"}})";
  ExpectLanguage(Schema(schema),
                 {"{}", R"({"p0":1})", R"({"p5":1,"p500":2})",
                  "{\"p" + std::to_string(kManyProperties - 1) + "\":3}", R"({"p1":1,"q":null})"},
                 {R"({"p5":1,"p0":2})", R"({"p1":null})"});
}

TEST(GuidedGrammarMatchTest, ExtraPropertiesNeverRepeatADeclaredOne) {
  Language l = Schema(R"({"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}},
                          "additionalProperties":{"type":"null"}})");
  ExpectLanguage(l,
                 {R"({"name":"x","zz":null})", R"({"na":null})", R"({"names":null})",
                  R"({"":null,"nam":null})", R"({"n":1,"m":null})", R"({"é":null})"},
                 {R"({"name":null})", R"({"n":null})", R"({"x":1})", R"({"name":"x","n":null})",
                  R"({"n\u0061me":null})"});
  ExpectLanguage(Schema(R"({"type":"object"})"),
                 {"{}", R"({"a":1,"a":"two"})", R"({"k":{"k":[]}})"}, {"[]", "null"});
}

TEST(GuidedGrammarMatchTest, Arrays) {
  ExpectLanguage(Schema(R"({"type":"array","items":{"type":"integer"},"minItems":1,"maxItems":3})"),
                 {"[1]", "[1,2]", "[1, 2, 3]", "[ 1 ]"}, {"[]", "[1,2,3,4]", "[1,]", "[,1]", "[\"a\"]"});
  ExpectLanguage(Schema(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})"),
                 {"[]", R"(["a"])", R"(["a",1])"}, {R"([1])", R"(["a",1,2])", R"(["a","b"])"});
  ExpectLanguage(Schema(R"({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"null"},"minItems":2})"),
                 {R"(["a",null])", R"(["a",null,null])"}, {R"(["a"])", R"([null,null])", "[]"});
  ExpectLanguage(Schema(R"({"type":"array","maxItems":0})"), {"[]", "[ ]"}, {"[1]"});
  ExpectLanguage(Schema(R"({"type":"array"})"), {"[]", R"([1,"a",[{}]])"}, {"[1,]"});
}

TEST(GuidedGrammarMatchTest, StringsCountCharactersNotBytes) {
  ExpectLanguage(Schema(R"({"type":"string","minLength":2,"maxLength":3})"),
                 {R"("ab")", R"("abc")", R"("é日")", R"("a\nb")", R"("\u00e9\"")", R"("😀😀")"},
                 {R"("a")", R"("abcd")", R"("\ud83d\ude00")", "\"a\nb\"", R"("\x")"});
  ExpectLanguage(Schema(R"({"type":"string"})"),
                 {R"("")", R"("tab\there \\ \/ \"q\"")"}, {R"("\ud800")", "\"unterminated"});
}

TEST(GuidedGrammarMatchTest, Patterns) {
  ExpectLanguage(Schema(R"({"type":"string","pattern":"^[a-z]+-\\d{2}$"})"),
                 {R"("ab-12")"}, {R"("ab-1")", R"("Ab-12")", R"("xab-12y")"});
  // Unanchored: matches anywhere, as JSON schema (re.search).
  ExpectLanguage(Schema(R"({"type":"string","pattern":"\\d{3}"})"),
                 {R"("123")", R"("ab123cd")"}, {R"("12")", R"("ab12c3")"});
  // Characters JSON escapes are written as escapes.
  ExpectLanguage(Schema(R"({"type":"string","pattern":"^[\"\\\\\\n]a.$"})"),
                 {R"("\"ab")", R"("\\ab")", R"("\na\"")", R"("\nab")"},
                 {"\"\"ab\"", R"("xab")", R"("\na\n")"});
}

TEST(GuidedGrammarMatchTest, Formats) {
  ExpectLanguage(Schema(R"({"type":"string","format":"date"})"),
                 {R"("2024-01-31")", R"("1999-04-30")", R"("2023-02-28")"},
                 {R"("2024-04-31")", R"("2024-13-01")", R"("2024-02-30")", R"("0000-01-01")", R"("24-01-01")"});
  ExpectLanguage(Schema(R"({"type":"string","format":"date-time"})"),
                 {R"("2024-01-31T23:59:59Z")", R"("2024-01-31T00:00:00.123+05:30")"},
                 {R"("2024-01-31 23:59:59Z")", R"("2024-01-31T24:00:00Z")", R"("2024-01-31T10:00:00")"});
  ExpectLanguage(Schema(R"({"type":"string","format":"time"})"), {R"("10:20:30-01:00")"}, {R"("10:20")"});
  ExpectLanguage(Schema(R"({"type":"string","format":"uuid"})"),
                 {R"("123e4567-e89b-12d3-a456-426614174000")"}, {R"("123e4567e89b12d3a456426614174000")"});
  ExpectLanguage(Schema(R"({"type":"string","format":"email"})"),
                 {R"("a.b+c@example.com")"}, {R"("a@b")", R"("@example.com")", R"("a..b@x.com")"});
  ExpectLanguage(Schema(R"({"type":"string","format":"ipv4"})"),
                 {R"("192.168.0.1")", R"("0.0.0.0")", R"("255.255.255.255")"},
                 {R"("256.1.1.1")", R"("01.1.1.1")", R"("1.1.1")"});
}

TEST(GuidedGrammarMatchTest, EnumConstAndCombinators) {
  ExpectLanguage(Schema(R"({"enum":["a\"b",1,null,[1,{"k":true}],"é"]})"),
                 {R"("a\"b")", "1", "null", R"([1,{"k":true}])", R"("é")"}, {R"("a")", "2", "[1]"});
  ExpectLanguage(Schema(R"({"const":"x"})"), {R"("x")"}, {R"("y")"});
  ExpectLanguage(Schema(R"({"anyOf":[{"type":"integer","maximum":3},{"type":"string","maxLength":1}]})"),
                 {"3", R"("a")", "-9"}, {"4", R"("ab")", "null"});
  ExpectLanguage(Schema(R"({"oneOf":[{"type":"boolean"},{"type":"null"}]})"), {"true", "null"}, {"0"});
  ExpectLanguage(Schema(R"({"type":["integer","null"],"minimum":1})"), {"1", "null"}, {"0", R"("1")"});
  ExpectLanguage(Schema(R"({"type":"string","nullable":true,"maxLength":1})"), {R"("a")", "null"}, {"1"});
}

TEST(GuidedGrammarMatchTest, RecursiveRefs) {
  Language l = Schema(R"({"$defs":{"node":{"type":"object","properties":{
      "v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},
      "required":["v"],"additionalProperties":false}},"$ref":"#/$defs/node"})");
  ExpectLanguage(l, {R"({"v":1})", R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]})"},
                 {R"({"v":1,"kids":[{}]})", R"({"kids":[]})"});
  ExpectLanguage(Schema(R"({"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},
                            "required":["next"],"additionalProperties":false})"),
                 {R"({"next":null})", R"({"next":{"next":{"next":null}}})"}, {R"({"next":{}})"});
}

TEST(GuidedGrammarMatchTest, WhitespaceIsBounded) {
  Language l = Language(JsonObjectGbnf());
  ExpectLanguage(l,
                 {"{}", "{ }", R"({"a": [1, {"b": null}], "c": "d"})",
                  "{\n" + std::string(20, ' ') + "\"a\": 1\n}", "{\n\t\"a\": 1}"},
                 {"{  }", "{\"a\":\t1}", "{\n" + std::string(21, ' ') + "\"a\": 1}", "{\n\n\"a\": 1}", " {}", "{} ",
                  "[]", "\"s\"", "{\"a\" 1}"});
}

TEST(GuidedGrammarMatchTest, Regexes) {
  struct Case {
    const char* regex;
    std::vector<std::string> yes, no;
  };
  for (const Case& c : std::vector<Case>{
           {"^\\d{3}-\\d{4}$", {"555-1234"}, {"555-12345", "55-1234", "abc-defg"}},
           {"(yes|no)", {"yes", "no"}, {"yesno", "", "ye"}},
           {"[A-Z][a-z]{0,3}( [A-Z][a-z]{0,3})?", {"Ab", "Ab Cd", "A"}, {"ab", "Ab cd", "Abcde"}},
           {"a.c", {"abc", "a c", "aéc"}, {"a\nc", "ac"}},
           {"[^a-c]+", {"xyz", "é"}, {"xaz", ""}},
           {"\\w+@\\w+\\.com", {"a_1@b.com"}, {"a@b.org", "a b@c.com"}},
           {"(?:ab)*c?", {"", "abab", "abc", "c"}, {"aba", "cc"}},
           {"\\s?[.!?]", {".", " !", "\t?"}, {"  .", "x"}},
           {"[\\u00e9-\\u00ea]x\\x41", {"éxA", "êxA"}, {"èxA", "exA"}},
           {"a{2,}b{,2}", {"aa", "aaab", "aabb"}, {"a", "aabbb"}},
           {"\\D\\W\\S", {"a!b", "a b"}, {"1!b", "a!\t", "ab!"}},
           {"\"\\\\", {"\"\\"}, {"\\"}},
       }) {
    ExpectLanguage(Language(RegexToGbnf(c.regex)), c.yes, c.no);
  }
}

// Enum values and choices that share a prefix are alive together while it is written.
TEST(GuidedGrammarMatchTest, LargestEnumsAndChoiceListsStayWithinTheMatchersCaps) {
  std::string schema = R"({"enum":[)";
  std::vector<std::string> choices;
  for (size_t i = 0; i < kMaxEnumValues; ++i) {
    schema += (i ? "," : "") + std::string("\"value_") + std::to_string(i) + "\"";
    choices.push_back("value_" + std::to_string(i));
  }
  ExpectLanguage(Schema(schema + "]}"), {R"("value_0")", R"("value_1023")"}, {R"("value_1024")"});
  ExpectLanguage(Language(ChoiceToGbnf(choices)), {"value_0", "value_1023"}, {"value_1024"});
}

TEST(GuidedGrammarMatchTest, Choices) {
  ExpectLanguage(Language(ChoiceToGbnf({"yes", "no", "a\"b\\c\nd", "日本", ""})),
                 {"yes", "no", "a\"b\\c\nd", "日本", ""}, {"ye", "yes ", "No", "日"});
}

}  // namespace
}  // namespace infera::guided
