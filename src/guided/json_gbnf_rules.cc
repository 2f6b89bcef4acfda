#include "guided/json_gbnf_rules.h"

#include "common/str_cat.h"

namespace infera::guided {
namespace {

// The rule memoized under `key`, else `hint` defined by `make` (which may recurse into
// other shared rules; the name is reserved first so recursion finds it).
template <typename Make>
std::string Shared(GbnfRules& rules, const std::string& key, std::string_view hint, Make make) {
  std::string name = rules.Named(key);
  if (!name.empty()) return name;
  name = rules.Reserve(hint);
  rules.Name(key, name);
  rules.Define(name, make());
  return name;
}

}  // namespace

std::string JsonWs(GbnfRules& rules) {
  return Shared(rules, "json:ws", "ws", [] {
    return StrCat("\" \"? | \"\\n\" ", GbnfRepeat("[ \\t]", 0, kMaxIndent));
  });
}

std::string JsonStringChar(GbnfRules& rules) {
  return Shared(rules, "json:char", "char", [] {
    CodePointSet plain = CodePointSet::All().Minus(CodePointSet::Between(0, 0x1F));
    plain = plain.Minus(CodePointSet::Of('"')).Minus(CodePointSet::Of('\\'));
    // \u escapes of UTF-16 surrogates are left out: a pair would count as two
    // characters here and one after decoding (minLength/maxLength), a lone one is not text.
    return StrCat(GbnfClass(plain),
                  " | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" ([0-9a-cA-Ce-fE-F] [0-9a-fA-F]{3} | "
                  "[dD] [0-7] [0-9a-fA-F]{2}))");
  });
}

std::string JsonString(GbnfRules& rules) {
  return Shared(rules, "json:string", "string", [&] {
    return StrCat("\"\\\"\" ", JsonStringChar(rules), "* \"\\\"\"");
  });
}

std::string JsonNumber(GbnfRules& rules) {
  return Shared(rules, "json:number", "number", [] {
    return "\"-\"? (\"0\" | [1-9] [0-9]*) (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)?";
  });
}

std::string JsonInteger(GbnfRules& rules) {
  return Shared(rules, "json:integer", "integer", [] { return "\"-\"? (\"0\" | [1-9] [0-9]*)"; });
}

std::string JsonBoolean(GbnfRules& rules) {
  return Shared(rules, "json:boolean", "boolean", [] { return "\"true\" | \"false\""; });
}

std::string JsonNull(GbnfRules& rules) {
  return Shared(rules, "json:null", "null", [] { return "\"null\""; });
}

std::string JsonValue(GbnfRules& rules) {
  std::string name = rules.Named("json:value");
  if (!name.empty()) return name;
  name = rules.Reserve("value");
  rules.Name("json:value", name);
  rules.Define(name, StrCat(JsonObject(rules), " | ", JsonArray(rules), " | ", JsonString(rules),
                            " | ", JsonNumber(rules), " | ", JsonBoolean(rules), " | ",
                            JsonNull(rules)));
  return name;
}

std::string JsonObject(GbnfRules& rules) {
  std::string name = rules.Named("json:object");
  if (!name.empty()) return name;
  name = rules.Reserve("object");
  rules.Name("json:object", name);
  std::string ws = JsonWs(rules);
  std::string value = JsonValue(rules);
  std::string member = StrCat(JsonString(rules), " ", ws, " \":\" ", ws, " ", value, " ", ws);
  rules.Define(name, StrCat("\"{\" ", ws, " (", member, " (\",\" ", ws, " ", member, ")*)? \"}\""));
  return name;
}

std::string JsonArray(GbnfRules& rules) {
  std::string name = rules.Named("json:array");
  if (!name.empty()) return name;
  name = rules.Reserve("array");
  rules.Name("json:array", name);
  std::string ws = JsonWs(rules);
  std::string value = JsonValue(rules);
  std::string item = StrCat(value, " ", ws);
  rules.Define(name, StrCat("\"[\" ", ws, " (", item, " (\",\" ", ws, " ", item, ")*)? \"]\""));
  return name;
}

}  // namespace infera::guided
