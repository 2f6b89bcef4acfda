// guided_choice → GBNF: the output is exactly one of the strings.
#include <set>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/str_cat.h"
#include "common/utf8.h"
#include "guided/gbnf_text.h"
#include "guided/guided_grammar.h"
#include "guided/guided_limits.h"

namespace infera::guided {

absl::StatusOr<std::string> ChoiceToGbnf(const std::vector<std::string>& choices) {
  if (choices.empty()) return absl::InvalidArgumentError("guided_choice: the list is empty");
  if (choices.size() > kMaxChoices) {
    return absl::InvalidArgumentError(StrCat("guided_choice: ", choices.size(),
                                             " strings, more than the limit of ", kMaxChoices));
  }
  std::vector<std::string> alts;
  std::set<std::string> seen;
  for (size_t i = 0; i < choices.size(); ++i) {
    const std::string& c = choices[i];
    if (c.size() > kMaxChoiceBytes) {
      return absl::InvalidArgumentError(StrCat("guided_choice[", i, "] is ", c.size(),
                                               " bytes, more than the limit of ",
                                               kMaxChoiceBytes));
    }
    if (!IsValidUtf8(c)) {
      return absl::InvalidArgumentError(StrCat("guided_choice[", i, "] is not valid UTF-8"));
    }
    if (seen.insert(c).second) alts.push_back(GbnfLiteral(c));
  }
  GbnfRules rules;
  rules.Define("root", StrJoin(alts, " | "));
  RETURN_IF_ERROR(rules.CheckSize("guided_choice"));
  return rules.Text();
}

}  // namespace infera::guided
