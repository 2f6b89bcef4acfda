#include "llm/cpu_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "api/float16.h"
#include "gtest/gtest.h"
#include "llm/kv_cache_dtype.h"

namespace infera::llm {
namespace {

constexpr KvKernelIsa kIsas[] = {KvKernelIsa::kPortable, KvKernelIsa::kAvx2, KvKernelIsa::kAvx512};
constexpr KvCacheDtype kDtypes[] = {KvCacheDtype::kFloat32, KvCacheDtype::kBFloat16, KvCacheDtype::kFloat16};

TEST(KvCacheDtypeTest, ParsesNamesAndSizes) {
  for (KvCacheDtype d : kDtypes) EXPECT_EQ(ParseKvCacheDtype(KvCacheDtypeName(d)), d);
  EXPECT_EQ(KvCacheElementSize(KvCacheDtype::kFloat32), 4);
  EXPECT_EQ(KvCacheElementSize(KvCacheDtype::kBFloat16), 2);
  EXPECT_EQ(KvCacheElementSize(KvCacheDtype::kFloat16), 2);
  for (const char* bad : {"", "FP16", "float16", "fp8", "bf16 ", "int8"}) {
    EXPECT_FALSE(ParseKvCacheDtype(bad).has_value()) << bad;
  }
}

TEST(KvKernelIsaTest, BestIsSupportedAndPortableAlwaysIs) {
  EXPECT_TRUE(KvKernelIsaSupported(KvKernelIsa::kPortable));
  EXPECT_TRUE(KvKernelIsaSupported(BestKvKernelIsa()));
  // AVX-512F implies AVX2/FMA/F16C on every CPU that has it; the dispatch prefers it.
  if (KvKernelIsaSupported(KvKernelIsa::kAvx512)) {
    EXPECT_EQ(BestKvKernelIsa(), KvKernelIsa::kAvx512);
  }
}

// StoreKvRow narrows exactly as api/float16.h does (round to nearest even), including
// ties, subnormals, overflow and NaN.
TEST(StoreKvRowTest, MatchesScalarConversions) {
  std::vector<float> src = {0.0f, -0.0f, 1.0f, 1.0f + 1.0f / 256,  // bf16 tie → even (1.0)
                            1.0f + 3.0f / 512,                      // bf16: rounds up
                            1.0f + 1.0f / 2048,                     // fp16 tie → even (1.0)
                            65504.0f, 65519.0f, 65520.0f, -1e9f,    // fp16 max, below/at overflow
                            5.9604645e-8f, 2.9802322e-8f, 1e-30f,   // fp16 subnormal, tie → 0, underflow
                            INFINITY, -INFINITY, NAN, 3.14159265f, -2.71828f};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-100.0f, 100.0f);
  for (int i = 0; i < 1000; ++i) src.push_back(dist(rng));
  std::vector<uint16_t> bf(src.size()), half(src.size());
  std::vector<float> f32(src.size());
  const int64_t n = static_cast<int64_t>(src.size());
  StoreKvRow(src.data(), n, KvCacheDtype::kBFloat16, bf.data());
  StoreKvRow(src.data(), n, KvCacheDtype::kFloat16, half.data());
  StoreKvRow(src.data(), n, KvCacheDtype::kFloat32, f32.data());
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(bf[i], FloatToBf16(src[i])) << i;
    EXPECT_EQ(half[i], FloatToHalf(src[i])) << i;
    if (std::isnan(src[i])) EXPECT_TRUE(std::isnan(f32[i]));
    else EXPECT_EQ(f32[i], src[i]);
  }
  EXPECT_EQ(Bf16ToFloat(bf[3]), 1.0f);
  EXPECT_EQ(Bf16ToFloat(bf[4]), 1.0f + 1.0f / 128);
  EXPECT_EQ(HalfToFloat(half[5]), 1.0f);
  EXPECT_EQ(HalfToFloat(half[6]), 65504.0f);
  EXPECT_EQ(HalfToFloat(half[7]), 65504.0f);
  EXPECT_TRUE(std::isinf(HalfToFloat(half[8])));
  EXPECT_TRUE(std::isinf(HalfToFloat(half[9])) && HalfToFloat(half[9]) < 0);
  EXPECT_EQ(HalfToFloat(half[10]), 5.9604645e-8f);
  EXPECT_EQ(HalfToFloat(half[11]), 0.0f);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(bf[15])));
  EXPECT_TRUE(std::isnan(HalfToFloat(half[15])));
}

// The portable kernel's inlined half → float equals api/float16.h's on all 65,536 inputs
// (bit for bit, NaN payloads and signed zeros included).
TEST(StoreKvRowTest, InlineHalfWideningIsExact) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float a = HalfToFloatInline(static_cast<uint16_t>(h)), b = HalfToFloat(static_cast<uint16_t>(h));
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    ASSERT_EQ(ua, ub) << std::hex << h;
  }
}

// A cache of `dtype` filled with random values, and the same values widened to double.
struct Cache {
  std::vector<float> f32;
  std::vector<uint16_t> u16;
  std::vector<double> widened;
  const void* data(KvCacheDtype dtype) const {
    return dtype == KvCacheDtype::kFloat32 ? static_cast<const void*>(f32.data()) : u16.data();
  }
};

Cache RandomCache(std::mt19937& rng, size_t n, KvCacheDtype dtype, float range) {
  std::uniform_real_distribution<float> dist(-range, range);
  Cache c;
  c.f32.resize(n);
  for (float& f : c.f32) f = dist(rng);
  c.u16.resize(n);
  c.widened.resize(n);
  if (dtype != KvCacheDtype::kFloat32) StoreKvRow(c.f32.data(), static_cast<int64_t>(n), dtype, c.u16.data());
  for (size_t i = 0; i < n; ++i) {
    c.widened[i] = dtype == KvCacheDtype::kFloat32    ? c.f32[i]
                   : dtype == KvCacheDtype::kBFloat16 ? Bf16ToFloat(c.u16[i])
                                                      : HalfToFloat(c.u16[i]);
  }
  return c;
}

struct AttentionCase {
  int64_t block_size, kv_heads, group, head_dim, context;
};

// Every supported ISA × dtype against a double-precision reference over the cache's
// widened values: scrambled block tables, GQA (every query head of a group reads its
// kv head), odd context lengths and head dims that leave vector tails; full attention,
// a sliding window (window_start) and soft-capped scores.
TEST(PagedAttentionTest, EveryIsaAndDtypeMatchesReference) {
  const AttentionCase cases[] = {
      {16, 2, 3, 64, 1},  {16, 2, 3, 64, 17}, {4, 3, 2, 32, 37},  {16, 1, 4, 128, 301},
      {8, 2, 1, 72, 45},  {1, 2, 2, 20, 9},   {16, 4, 2, 64, 1000}, {5, 1, 1, 3, 11},
  };
  std::mt19937 rng(1234);
  int checked = 0;
  for (const AttentionCase& c : cases) {
    const int64_t blocks_needed = (c.context + c.block_size - 1) / c.block_size;
    const int64_t num_blocks = blocks_needed * 2 + 3;
    std::vector<int32_t> pool(static_cast<size_t>(num_blocks));
    for (int64_t b = 0; b < num_blocks; ++b) pool[b] = static_cast<int32_t>(b);
    std::shuffle(pool.begin(), pool.end(), rng);
    std::vector<int32_t> table(pool.begin(), pool.begin() + blocks_needed);
    const PagedKvLayout layout{c.block_size, c.kv_heads, c.head_dim};
    const size_t cache_elems = static_cast<size_t>(num_blocks * c.block_size * layout.SlotStride());
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    for (KvCacheDtype dtype : kDtypes) {
      const Cache k = RandomCache(rng, cache_elems, dtype, 2.0f);
      const Cache v = RandomCache(rng, cache_elems, dtype, 1.0f);
      for (int64_t head = 0; head < c.kv_heads * c.group; ++head) {
        const int64_t kv_head = head / c.group;
        // Full, a window over the last ~2/3 of the context, soft-capped, both.
        const AttentionVariant variant{head % 2 == 1 ? c.context / 3 : 0, head % 3 == 2 ? 1.5f : 0.0f};
        const int64_t first = variant.window_start;
        std::vector<float> q(static_cast<size_t>(c.head_dim));
        std::uniform_real_distribution<float> qd(-2.0f, 2.0f);
        for (float& x : q) x = qd(rng);
        // Reference.
        std::vector<double> scores(static_cast<size_t>(c.context), -INFINITY);
        double max_score = -INFINITY;
        for (int64_t p = first; p < c.context; ++p) {
          const int64_t slot = table[p / c.block_size] * c.block_size + p % c.block_size;
          double dot = 0;
          for (int64_t i = 0; i < c.head_dim; ++i) {
            dot += q[i] * k.widened[slot * layout.SlotStride() + kv_head * c.head_dim + i];
          }
          scores[p] = dot * scale;
          if (variant.logit_softcap > 0) scores[p] = variant.logit_softcap * std::tanh(scores[p] / variant.logit_softcap);
          max_score = std::max(max_score, scores[p]);
        }
        double denom = 0;
        for (double& s : scores) denom += (s = std::exp(s - max_score));
        std::vector<double> want(static_cast<size_t>(c.head_dim), 0.0);
        for (int64_t p = first; p < c.context; ++p) {
          const int64_t slot = table[p / c.block_size] * c.block_size + p % c.block_size;
          for (int64_t i = 0; i < c.head_dim; ++i) {
            want[i] += scores[p] / denom * v.widened[slot * layout.SlotStride() + kv_head * c.head_dim + i];
          }
        }
        for (KvKernelIsa isa : kIsas) {
          if (!KvKernelIsaSupported(isa)) continue;
          SCOPED_TRACE(testing::Message() << KvKernelIsaName(isa) << " " << KvCacheDtypeName(dtype) << " bs="
                                          << c.block_size << " hkv=" << c.kv_heads << " d=" << c.head_dim
                                          << " ctx=" << c.context << " head=" << head
                                          << " window_start=" << first << " cap=" << variant.logit_softcap);
          std::vector<float> scratch(static_cast<size_t>(c.context), -1.0f);
          std::vector<float> out(static_cast<size_t>(c.head_dim), 99.0f);
          PagedAttentionHeadOn(isa, q.data(), k.data(dtype), v.data(dtype), dtype, table.data(), c.context, kv_head,
                               layout, scale, scratch.data(), out.data(), variant);
          for (int64_t i = 0; i < c.head_dim; ++i) {
            ASSERT_NEAR(out[i], want[i], 2e-6 + 2e-5 * std::abs(want[i])) << "i=" << i;
          }
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// GeGLU's gate: PyTorch's gelu(approximate="tanh") times up, against double precision.
TEST(GeluTanhMulTest, MatchesTheTanhApproximation) {
  std::vector<float> gate, up;
  for (int i = -60; i <= 60; ++i) {
    gate.push_back(static_cast<float>(i) / 8.0f);
    up.push_back(1.0f + static_cast<float>(i % 7) / 10.0f);
  }
  std::vector<float> out(gate.size());
  GeluTanhMul(gate.data(), up.data(), static_cast<int64_t>(gate.size()), out.data());
  for (size_t i = 0; i < gate.size(); ++i) {
    const double g = gate[i];
    const double want = 0.5 * g * (1 + std::tanh(std::sqrt(2 / M_PI) * (g + 0.044715 * g * g * g))) * up[i];
    EXPECT_NEAR(out[i], want, 1e-6 + 1e-6 * std::abs(want)) << "g=" << g;
  }
  EXPECT_EQ(out[60], 0.0f);  // gelu(0) = 0
}

// The dispatching entry point and the fp32 overload give what the best ISA gives.
TEST(PagedAttentionTest, DispatchUsesBestIsa) {
  std::mt19937 rng(99);
  const PagedKvLayout layout{16, 2, 64};
  const int64_t context = 40;
  std::vector<int32_t> table = {3, 0, 2};
  for (KvCacheDtype dtype : kDtypes) {
    const Cache k = RandomCache(rng, 4 * 16 * 128, dtype, 1.0f);
    const Cache v = RandomCache(rng, 4 * 16 * 128, dtype, 1.0f);
    std::vector<float> q(64, 0.25f), scratch(context), a(64), b(64);
    PagedAttentionHead(q.data(), k.data(dtype), v.data(dtype), dtype, table.data(), context, 1, layout, 0.125f,
                       scratch.data(), a.data());
    PagedAttentionHeadOn(BestKvKernelIsa(), q.data(), k.data(dtype), v.data(dtype), dtype, table.data(), context, 1,
                         layout, 0.125f, scratch.data(), b.data());
    EXPECT_EQ(a, b) << KvCacheDtypeName(dtype);
    if (dtype == KvCacheDtype::kFloat32) {
      PagedAttentionHead(q.data(), k.f32.data(), v.f32.data(), table.data(), context, 1, layout, 0.125f,
                         scratch.data(), b.data());
      EXPECT_EQ(a, b);
    }
  }
}

}  // namespace
}  // namespace infera::llm
