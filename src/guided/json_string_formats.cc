#include "guided/json_string_formats.h"

#include "common/str_cat.h"

namespace infera::guided {
namespace {

std::string Date() {
  return "[1-9] [0-9]{3} \"-\" ("
         "(\"01\" | \"03\" | \"05\" | \"07\" | \"08\" | \"10\" | \"12\") \"-\" "
         "(\"0\" [1-9] | [12] [0-9] | \"3\" [01]) | "
         "(\"04\" | \"06\" | \"09\" | \"11\") \"-\" (\"0\" [1-9] | [12] [0-9] | \"30\") | "
         "\"02\" \"-\" (\"0\" [1-9] | \"1\" [0-9] | \"2\" [0-8]))";
}

std::string Time() {
  const std::string hour = "([01] [0-9] | \"2\" [0-3])";
  const std::string minute = "[0-5] [0-9]";
  return StrCat(hour, " \":\" ", minute, " \":\" ", minute, " (\".\" [0-9]{1,9})? (\"Z\" | [+\\x2D] ",
                hour, " \":\" ", minute, ")");
}

}  // namespace

std::string StringFormatGbnf(std::string_view format) {
  if (format == "date") return Date();
  if (format == "time") return Time();
  if (format == "date-time") return StrCat(Date(), " \"T\" ", Time());
  if (format == "uuid") {
    const std::string h = "[0-9a-fA-F]";
    return StrCat(h, "{8} \"-\" ", h, "{4} \"-\" ", h, "{4} \"-\" ", h, "{4} \"-\" ", h, "{12}");
  }
  if (format == "email") {
    // atext (RFC 5322) minus the characters JSON would escape.
    const std::string atext = "[a-zA-Z0-9!#$%&'*+/=?\\x5E_`{|}~\\x2D]";
    const std::string label = "[a-zA-Z0-9] ([a-zA-Z0-9\\x2D]{0,61} [a-zA-Z0-9])?";
    return StrCat(atext, "{1,64} (\".\" ", atext, "{1,64}){0,4} \"@\" ", label, " (\".\" ", label,
                  "){1,4}");
  }
  if (format == "ipv4") {
    const std::string octet =
        "(\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9] [0-9] | [0-9])";
    return StrCat(octet, " \".\" ", octet, " \".\" ", octet, " \".\" ", octet);
  }
  return "";
}

}  // namespace infera::guided
