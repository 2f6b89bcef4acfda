// Fuzz target: the regex and choice → GBNF compilers (guided/guided_grammar.h
// RegexToGbnf, ChoiceToGbnf).
//
// Input: a regular expression; the same bytes split at '\n' are a guided_choice list.
// Oracle besides ASan/UBSan (and libFuzzer's time and memory limits: pathological
// regexes must be refused quickly): a refusal is InvalidArgument with a message; a
// grammar starts with the `root` rule and is at most kMaxGrammarBytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "api/sampling_params.h"
#include "guided/guided_grammar.h"

namespace {

void Check(const absl::StatusOr<std::string>& grammar) {
  if (!grammar.ok()) {
    if (grammar.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    if (grammar.status().message().empty()) std::abort();
    return;
  }
  if (grammar->rfind("root ::= ", 0) != 0) std::abort();
  if (grammar->size() > infera::kMaxGrammarBytes) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(infera::guided::RegexToGbnf(text));
  std::vector<std::string> choices;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    choices.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  Check(infera::guided::ChoiceToGbnf(choices));
  return 0;
}
