// The test tokenizers of the shared text module (text/test_tokenizers.h), named
// infera::llm::testing::* for the LLM engine's tests.
#ifndef INFERA_LLM_TEST_TOKENIZERS_H_
#define INFERA_LLM_TEST_TOKENIZERS_H_

#include "llm/text_imports.h"
#include "text/test_tokenizers.h"

namespace infera::llm::testing {

using text::testing::ByteLevelTokenizerJson;
using text::testing::kGpt2PreTokenizer;
using text::testing::SentencePieceTokenizerJson;

}  // namespace infera::llm::testing

#endif  // INFERA_LLM_TEST_TOKENIZERS_H_
