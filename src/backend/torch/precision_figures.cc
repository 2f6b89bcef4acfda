#include "backend/torch/precision_figures.h"

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <limits>

#include "common/str_cat.h"

namespace infera {
namespace {

int64_t ArgMax(const float* row, int64_t cols) {
  int64_t best = 0;
  for (int64_t c = 1; c < cols; ++c) {
    if (row[c] > row[best]) best = c;
  }
  return best;
}

// Short, stable text for a figure ("0.99998", "1e-05").
std::string Figure(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

}  // namespace

double Cosine(const float* a, const float* b, int64_t n) {
  double dot = 0, norm_a = 0, norm_b = 0;
  for (int64_t c = 0; c < n; ++c) {
    if (!std::isfinite(a[c]) || !std::isfinite(b[c])) return 0;
    dot += static_cast<double>(a[c]) * b[c];
    norm_a += static_cast<double>(a[c]) * a[c];
    norm_b += static_cast<double>(b[c]) * b[c];
  }
  if (norm_a == 0 && norm_b == 0) return 1;
  if (norm_a == 0 || norm_b == 0) return 0;
  return dot / (std::sqrt(norm_a) * std::sqrt(norm_b));
}

void PrecisionComparison::Add(const float* reference, const float* reduced, int64_t rows,
                              int64_t cols, bool classifier) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* a = reference + r * cols;
    const float* b = reduced + r * cols;
    for (int64_t c = 0; c < cols; ++c) {
      const double error = std::fabs(static_cast<double>(a[c]) - b[c]);
      if (!(error <= figures_.max_abs_error)) {  // also takes NaN
        figures_.max_abs_error = std::isnan(error) ? std::numeric_limits<double>::infinity() : error;
      }
    }
    if (cols == 1) {
      scalar_reference_.push_back(a[0]);
      scalar_reduced_.push_back(b[0]);
    } else {
      figures_.cosine = std::min(figures_.cosine, Cosine(a, b, cols));
    }
    if (classifier && cols >= 2) {
      ++classifier_rows_;
      if (ArgMax(a, cols) == ArgMax(b, cols)) ++agreeing_rows_;
    }
    ++figures_.num_samples;
  }
}

PrecisionFigures PrecisionComparison::figures() const {
  PrecisionFigures out = figures_;
  if (!scalar_reference_.empty()) {
    out.cosine = std::min(out.cosine, Cosine(scalar_reference_.data(), scalar_reduced_.data(),
                                             static_cast<int64_t>(scalar_reference_.size())));
  }
  if (classifier_rows_ > 0) {
    out.top1_agreement = static_cast<double>(agreeing_rows_) / static_cast<double>(classifier_rows_);
  }
  return out;
}

absl::Status CheckPrecisionFloors(const PrecisionFigures& figures, const TorchModelOptions& options) {
  std::string missed;
  if (!(figures.cosine >= options.min_cosine)) {
    missed = StrCat("cosine ", Figure(figures.cosine), " < PRECISION_MIN_COSINE ",
                    Figure(options.min_cosine));
  }
  if (figures.top1_agreement && !(*figures.top1_agreement >= options.min_top1_agreement)) {
    if (!missed.empty()) missed += ", ";
    missed += StrCat("top1_agreement ", Figure(*figures.top1_agreement),
                     " < PRECISION_MIN_TOP1_AGREEMENT ", Figure(options.min_top1_agreement));
  }
  if (missed.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      StrCat("PRECISION ", PrecisionName(options.precision), " is too far from fp32: ", missed,
             " (", DescribeFigures(figures), ")"));
}

std::string DescribeFigures(const PrecisionFigures& figures) {
  std::string out = StrCat("max_abs_error ", Figure(figures.max_abs_error), ", cosine ",
                           Figure(figures.cosine));
  if (figures.top1_agreement) out += StrCat(", top1_agreement ", Figure(*figures.top1_agreement));
  return StrCat(out, " over ", figures.num_samples, " samples");
}

}  // namespace infera
