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
#include "backend/token_counter.h"

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

}  // namespace infera

#endif  // INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_
