// Processing backends: C++ steps around a model (docs/pipelines.md, "Processing
// backends: config contracts"), each a Backend registered by name in server.cc. They run
// on scheduler worker threads (UsesIntraOpThreads() and RunsInline() false) and never
// include LibTorch headers.
#ifndef INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_
#define INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_

#include <memory>

#include "backend/backend.h"

namespace infera {

// --- post-processing (infera_processing_postprocess) ---
// classify: scores [C] → top-K `scores` / `indices` / `labels`, optional softmax.
std::unique_ptr<Backend> CreateClassifyBackend();
// detect_postprocess: boxes [N,4] + scores [N,C] → score threshold + greedy NMS →
// det_boxes / det_scores / det_classes (zero-padded to max_detections) + num_detections.
std::unique_ptr<Backend> CreateDetectPostprocessBackend();
// pool: token_embeddings [L,D] (+ attention_mask [L]) → embedding [D], mean or CLS, L2.
std::unique_ptr<Backend> CreatePoolBackend();
// --- end post-processing ---

}  // namespace infera

#endif  // INFERA_BACKEND_PROCESSING_PROCESSING_BACKENDS_H_
