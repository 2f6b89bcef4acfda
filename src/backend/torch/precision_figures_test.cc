#include "backend/torch/precision_figures.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

TEST(PrecisionFiguresTest, IdenticalOutputsArePerfect) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  PrecisionComparison comparison;
  comparison.Add(a.data(), a.data(), 2, 3, true);
  const PrecisionFigures f = comparison.figures();
  EXPECT_EQ(f.num_samples, 2);
  EXPECT_EQ(f.max_abs_error, 0.0);
  EXPECT_NEAR(f.cosine, 1.0, 1e-12);
  ASSERT_TRUE(f.top1_agreement.has_value());
  EXPECT_EQ(*f.top1_agreement, 1.0);
}

TEST(PrecisionFiguresTest, FiguresMatchAHandComputedReference) {
  // Row 0: (1, 0) vs (1, 1): cosine 1/sqrt(2), argmax 0 vs 0 (tie -> first).
  // Row 1: (0, 2) vs (3, 0): cosine 0, argmax 1 vs 0, error 3.
  const std::vector<float> ref = {1, 0, 0, 2};
  const std::vector<float> got = {1, 1, 3, 0};
  PrecisionComparison comparison;
  comparison.Add(ref.data(), got.data(), 2, 2, true);
  const PrecisionFigures f = comparison.figures();
  EXPECT_DOUBLE_EQ(f.max_abs_error, 3.0);
  EXPECT_NEAR(f.cosine, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(*f.top1_agreement, 0.5);

  PrecisionComparison first_row_only;
  first_row_only.Add(ref.data(), got.data(), 1, 2, true);
  EXPECT_NEAR(first_row_only.figures().cosine, 1.0 / std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(first_row_only.figures().max_abs_error, 1.0);
}

TEST(PrecisionFiguresTest, NonClassifierOutputsHaveNoTop1) {
  const std::vector<float> a = {1, 2, 3};
  PrecisionComparison comparison;
  comparison.Add(a.data(), a.data(), 1, 3, false);
  EXPECT_FALSE(comparison.figures().top1_agreement.has_value());
}

TEST(PrecisionFiguresTest, ZeroAndNonFiniteRows) {
  const std::vector<float> zeros = {0, 0};
  const std::vector<float> ones = {1, 1};
  PrecisionComparison both_zero;
  both_zero.Add(zeros.data(), zeros.data(), 1, 2, false);
  EXPECT_EQ(both_zero.figures().cosine, 1.0);
  PrecisionComparison one_zero;
  one_zero.Add(ones.data(), zeros.data(), 1, 2, false);
  EXPECT_EQ(one_zero.figures().cosine, 0.0);
  const std::vector<float> nan = {std::numeric_limits<float>::quiet_NaN(), 1};
  PrecisionComparison with_nan;
  with_nan.Add(ones.data(), nan.data(), 1, 2, false);
  EXPECT_EQ(with_nan.figures().cosine, 0.0);
  EXPECT_TRUE(std::isinf(with_nan.figures().max_abs_error));
}

TEST(PrecisionFiguresTest, ScalarOutputsArePooledIntoOneCosine) {
  // Per row, (1) vs (2) would be cosine 1; pooled: (1, 2) . (2, 1) / 5 = 0.8.
  const std::vector<float> ref = {1, 2};
  const std::vector<float> got = {2, 1};
  PrecisionComparison comparison;
  comparison.Add(ref.data(), got.data(), 1, 1, false);
  comparison.Add(ref.data() + 1, got.data() + 1, 1, 1, false);
  EXPECT_NEAR(comparison.figures().cosine, 0.8, 1e-12);
  EXPECT_DOUBLE_EQ(comparison.figures().max_abs_error, 1.0);
  EXPECT_EQ(comparison.figures().num_samples, 2);
}

TEST(PrecisionFiguresTest, FloorsNameTheFigures) {
  TorchModelOptions options;
  options.precision = Precision::kInt8Dynamic;
  options.min_cosine = 0.99;
  options.min_top1_agreement = 0.95;
  PrecisionFigures good;
  good.cosine = 0.995;
  good.top1_agreement = 1.0;
  EXPECT_TRUE(CheckPrecisionFloors(good, options).ok());

  PrecisionFigures bad = good;
  bad.cosine = 0.5;
  bad.top1_agreement = 0.75;
  bad.num_samples = 32;
  const absl::Status status = CheckPrecisionFloors(bad, options);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr("PRECISION int8_dynamic"));
  EXPECT_THAT(status.message(), HasSubstr("cosine 0.5 < PRECISION_MIN_COSINE 0.99"));
  EXPECT_THAT(status.message(),
              HasSubstr("top1_agreement 0.75 < PRECISION_MIN_TOP1_AGREEMENT 0.95"));
  EXPECT_THAT(status.message(), HasSubstr("over 32 samples"));

  // No classifier output: only the cosine floor applies.
  PrecisionFigures regression = good;
  regression.top1_agreement.reset();
  options.min_top1_agreement = 1.0;
  EXPECT_TRUE(CheckPrecisionFloors(regression, options).ok());
}

}  // namespace
}  // namespace infera
