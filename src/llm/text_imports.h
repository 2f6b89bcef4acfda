// The names of the shared text module (src/text: the Hugging Face tokenizer, UTF-8
// helpers, JSON helpers) that the LLM engine uses unqualified, imported into
// infera::llm so that `llm::Tokenizer`, `llm::SanitizeUtf8` ... keep naming them.
//
// Thread-safety: see the imported headers.
#ifndef INFERA_LLM_TEXT_IMPORTS_H_
#define INFERA_LLM_TEXT_IMPORTS_H_

#include "text/json_util.h"
#include "text/tokenizer.h"
#include "text/unicode.h"

namespace infera::llm {

using text::AddedToken;
using text::Tokenizer;

using text::AppendUtf8;
using text::CompleteUtf8Prefix;
using text::DecodeUtf8;
using text::EncodeUtf8;
using text::IsLetter;
using text::IsNumber;
using text::IsWhitespace;
using text::SanitizeUtf8;

using text::AsView;
using text::FindMember;
using text::GetBool;
using text::GetDouble;
using text::GetInt;
using text::GetString;
using text::ParseJson;
using text::ReadFileToString;

}  // namespace infera::llm

#endif  // INFERA_LLM_TEXT_IMPORTS_H_
