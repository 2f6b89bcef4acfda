// PrecisionComparison: how far a reduced-precision model's outputs are from its fp32
// outputs — max abs error, the worst per-sample cosine similarity and, for classifier
// outputs, top-1 agreement — and the load-time floors on them (docs/optimisation.md).
//
// Torch-free: the loader hands it float rows, so the arithmetic is tested without LibTorch.
//
// Usage:
//   PrecisionComparison comparison;
//   comparison.Add(ref.data(), got.data(), /*rows=*/batch, /*cols=*/classes, /*classifier=*/true);
//   PrecisionFigures figures = comparison.figures();
//   RETURN_IF_ERROR(CheckPrecisionFloors(figures, options));
//
// Not thread-safe; owned by the loading thread.
#ifndef INFERA_BACKEND_TORCH_PRECISION_FIGURES_H_
#define INFERA_BACKEND_TORCH_PRECISION_FIGURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "backend/torch/torch_options.h"

namespace infera {

struct PrecisionFigures {
  int64_t num_samples = 0;      // rows compared (per output, summed)
  double max_abs_error = 0.0;   // max |fp32 - reduced| over every element
  double cosine = 1.0;          // the smallest per-row cosine similarity
  std::optional<double> top1_agreement;  // share of classifier rows with equal argmax
};

class PrecisionComparison {
 public:
  // One output of one batch: `rows` samples of `cols` values each, row-major. With
  // `classifier` (a 2-D [batch, classes] output, classes >= 2) the argmax is compared.
  // A row that is all zeros in both has cosine 1; zero in one only has cosine 0.
  // Non-finite values make the row's cosine 0 and the error infinite.
  // With cols == 1 (one scalar per sample, e.g. a ranker's score) a per-row cosine is
  // only a sign test, so those values are pooled and figures() takes one cosine over
  // all of them.
  void Add(const float* reference, const float* reduced, int64_t rows, int64_t cols,
           bool classifier);

  PrecisionFigures figures() const;

 private:
  PrecisionFigures figures_;
  int64_t classifier_rows_ = 0;
  int64_t agreeing_rows_ = 0;
  std::vector<float> scalar_reference_, scalar_reduced_;  // cols == 1 outputs, pooled
};

// Cosine similarity of two vectors, with the zero / non-finite rules of Add().
double Cosine(const float* a, const float* b, int64_t n);

// OK when `figures` meet the floors in `options`; else FailedPrecondition naming the
// precision, each figure and the floor it missed.
absl::Status CheckPrecisionFloors(const PrecisionFigures& figures, const TorchModelOptions& options);

// "max_abs_error 0.0012, cosine 0.99998, top1_agreement 1 (32 samples)" for logs/errors.
std::string DescribeFigures(const PrecisionFigures& figures);

}  // namespace infera

#endif  // INFERA_BACKEND_TORCH_PRECISION_FIGURES_H_
