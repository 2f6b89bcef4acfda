// SpmMergesFromScores: the BPE merge list equivalent to a SentencePiece-style BPE
// vocabulary given as tokens and scores (GGUF "llama" tokenizers carry scores, not
// merges).
//
// SentencePiece BPE repeatedly joins the adjacent pair whose joined text is the
// vocabulary entry with the highest score (leftmost first among equals). As a merge list
// (what text::BpeModel runs: lowest rank first, leftmost first among equals) that is:
// for every mergeable target token t, every split t = a + b with a and b in the
// vocabulary, ranked by t's score (highest first; equal scores by token id), the splits
// of one target by (id of a, id of b). This is how Hugging Face converts SentencePiece
// models to tokenizer.json, so the result equals the published tokenizer.json merges
// where each token has one split into vocabulary entries. Cost: one hash lookup per
// byte boundary of every target (O(total token bytes)).
//
// Thread-safe (a pure function).
#ifndef INFERA_GGUF_SPM_MERGES_H_
#define INFERA_GGUF_SPM_MERGES_H_

#include <string_view>
#include <utility>
#include <vector>

namespace infera::gguf {

// `mergeable[i]`: token i may be a merge target (normal and user-defined tokens; not
// control, byte, unknown or unused ones). Splits are cut at UTF-8 character boundaries.
// Returns (a, b) pairs in rank order; the views point into `tokens`.
std::vector<std::pair<std::string_view, std::string_view>> SpmMergesFromScores(
    const std::vector<std::string_view>& tokens, const std::vector<float>& scores,
    const std::vector<bool>& mergeable);

}  // namespace infera::gguf

#endif  // INFERA_GGUF_SPM_MERGES_H_
