// Processing backends (docs/pipelines.md): built-in C++ backends that do the work around
// a model — decode and resize an image, tokenize text, post-process scores — as
// ordinary models of the repository, so they run alone or as ensemble steps. None of
// them includes LibTorch; each runs on the scheduler's worker threads.
#ifndef INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_
#define INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "backend/backend.h"

namespace infera {

// --- image_preprocess (image_preprocess_backend.cc) ---
// BYTES [1] encoded JPEG/PNG -> FP32 [3, H, W]: decode, resize (torchvision's antialiased
// bilinear), center crop, normalise; configuration in image_preprocess_options.h.
std::unique_ptr<Backend> CreateImagePreprocessBackend();
// --- post-processing (infera_processing_postprocess) ---
// classify: scores [C] → top-K `scores` / `indices` / `labels`, optional softmax.
std::unique_ptr<Backend> CreateClassifyBackend();
// detect_postprocess: boxes [N,4] + scores [N,C] → score threshold + greedy NMS →
// det_boxes / det_scores / det_classes (zero-padded to max_detections) + num_detections.
std::unique_ptr<Backend> CreateDetectPostprocessBackend();
// pool: token_embeddings [L,D] (+ attention_mask [L]) → embedding [D], mean or CLS, L2.
std::unique_ptr<Backend> CreatePoolBackend();
// --- end post-processing ---
// --- tokenize (tokenize_backend.cc) ---
// UTF-8 text (BYTES [1]) → input_ids / attention_mask / token_type_ids (INT64 [L]) with
// a Hugging Face tokenizer.json (WordPiece or BPE), truncated and padded to
// `max_length` = L. Contract: docs/pipelines.md "tokenize".
std::unique_ptr<Backend> CreateTokenizeBackend();

// What a loaded `tokenize` model offers besides Infer(): the number of tokens it feeds
// the next step for `text` (special tokens included, at most max_length), for the
// OpenAI embeddings usage counts (http/embeddings_routes.h). Reach it by
// dynamic_cast<const TokenCounter*>(&version->loaded_model()).
//
// Thread-safe (const; the tokenizer is immutable).
class TokenCounter {
 public:
  virtual ~TokenCounter() = default;
  virtual size_t CountTokens(std::string_view text) const = 0;
};

}  // namespace infera

#endif  // INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_
