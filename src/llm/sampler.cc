#include "llm/sampler.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>

#include "common/cpu_features.h"
#include "llm/grammar_constraint.h"

namespace infera::llm {
namespace {

// The index std::max_element(x, x + n) gives (the first of equal maxima), on AVX-512: the
// maximum in one vector pass, then the first element equal to it. Every sampled row is
// scanned on the engine thread, 128 k logits for Llama 3's vocabulary: 130-140 us a row
// for std::max_element, 8 rows a step at C=8. -1 when x holds a NaN (max_element's
// answer then depends on where the NaNs are; the caller asks it).
__attribute__((target("avx512f"))) int64_t FirstMaxAvx512(const float* x, int64_t n) {
  __m512 best = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __mmask16 nan = 0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    best = _mm512_maskz_max_ps(0xFFFF, best, v);  // maskz: the unmasked form trips g++ 12's -Wmaybe-uninitialized
  }
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, best);
  float m = lanes[0];
  for (int l = 1; l < 16; ++l) m = std::max(m, lanes[l]);
  for (; i < n; ++i) {
    if (std::isnan(x[i])) return -1;
    m = std::max(m, x[i]);
  }
  if (nan != 0) return -1;
  const __m512 target = _mm512_set1_ps(m);
  for (i = 0; i + 16 <= n; i += 16) {
    const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), target, _CMP_EQ_OQ);
    if (hit != 0) return i + __builtin_ctz(hit);
  }
  for (; i < n; ++i) {
    if (x[i] == m) return i;
  }
  return 0;  // n == 0
}

// std::max_element(x, x + n) - x, faster (see FirstMaxAvx512).
int64_t FirstMax(const float* x, int64_t n) {
  if (CpuHasAvx512f() && n > 0) {
    const int64_t i = FirstMaxAvx512(x, n);
    if (i >= 0) return i;
  }
  return std::max_element(x, x + n) - x;
}

// Σ exp(x[i] − m) over i < n − n % 16, the exps in float on AVX-512 (within an ulp or so
// of expf: 2^k · a degree-7 Taylor polynomial on |r| ≤ ln 2 / 2, whose remainder is below
// 6e-9), summed in double. A NaN difference stays NaN; below −110 the exp is 0 in float.
// Why: the scalar double exp took 250 µs for a 128 k vocabulary, per sampled row, on the
// engine thread (logprobs).
// (g++ 12 flags the undefined pass-through operand inside its own AVX-512 header's
// unmasked intrinsics as maybe-uninitialised, as in the kernel files.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) double ExpSumAvx512(const float* x, int64_t n, float m) {
  const __m512 vm = _mm512_set1_ps(m), low = _mm512_set1_ps(-110.0f), log2e = _mm512_set1_ps(1.44269504f);
  const __m512 ln2_hi = _mm512_set1_ps(0.693359375f), ln2_lo = _mm512_set1_ps(-2.12194440e-4f);
  constexpr float kInvFactorial[8] = {1.0f,         1.0f,          1.0f / 2,      1.0f / 6,
                                      1.0f / 24,    1.0f / 120,    1.0f / 720,    1.0f / 5040};
  __m512d lo_sum = _mm512_setzero_pd(), hi_sum = _mm512_setzero_pd();
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    // max(low, d): the second operand when either is NaN, so a NaN d survives.
    const __m512 d = _mm512_maskz_max_ps(0xFFFF, low, _mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
    const __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(d, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 r = _mm512_fnmadd_ps(k, ln2_lo, _mm512_fnmadd_ps(k, ln2_hi, d));
    __m512 p = _mm512_set1_ps(kInvFactorial[7]);
    for (int j = 6; j >= 0; --j) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kInvFactorial[j]));
    const __m512 e = _mm512_maskz_scalef_ps(0xFFFF, p, k);
    lo_sum = _mm512_add_pd(lo_sum, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
    hi_sum = _mm512_add_pd(hi_sum, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
  }
  alignas(64) double lanes[8];
  _mm512_store_pd(lanes, _mm512_add_pd(lo_sum, hi_sum));
  double sum = 0;
  for (double v : lanes) sum += v;
  return sum;
}
#pragma GCC diagnostic pop

float LogSumExp(const float* x, int64_t n) {
  const float m = x[FirstMax(x, n)];
  const int64_t vector = CpuHasAvx512f() ? n / 16 * 16 : 0;
  double sum = vector > 0 ? ExpSumAvx512(x, vector, m) : 0.0;
  for (int64_t i = vector; i < n; ++i) sum += std::exp(static_cast<double>(x[i] - m));
  return m + static_cast<float>(std::log(sum));
}

// Whether Sample changes the logits in place before the token is chosen: a bias or
// penalty (ApplyPenalties below), a grammar's mask, or a draw (temperature and truncation
// work on them). Greedy without any of these only reads them (Argmax).
bool ChangesLogits(const LlmRequest& r) {
  const SamplingParams& s = r.sampling;
  return !s.greedy() || static_cast<bool>(r.constraint) || !s.logit_bias.empty() ||
         (r.num_output_tokens() < s.min_tokens && !r.min_tokens_banned_ids.empty()) ||
         s.repetition_penalty != 1.0 || s.frequency_penalty != 0.0 || s.presence_penalty != 0.0;
}

void ApplyPenalties(float* logits, int64_t vocab, const LlmRequest& r) {
  const SamplingParams& s = r.sampling;
  for (const auto& [id, bias] : s.logit_bias) {
    if (id >= 0 && id < vocab) logits[id] += bias;
  }
  if (r.num_output_tokens() < s.min_tokens) {
    for (int32_t id : r.min_tokens_banned_ids) {
      if (id >= 0 && id < vocab) logits[id] = -std::numeric_limits<float>::infinity();
    }
  }
  if (s.repetition_penalty != 1.0) {
    std::vector<bool> seen(vocab, false);
    for (int32_t t : r.all_token_ids) {
      if (t < 0 || t >= vocab || seen[t]) continue;
      seen[t] = true;
      const float p = static_cast<float>(s.repetition_penalty);
      logits[t] = logits[t] > 0 ? logits[t] / p : logits[t] * p;
    }
  }
  if (s.frequency_penalty != 0.0 || s.presence_penalty != 0.0) {
    std::unordered_map<int32_t, int> counts;
    for (size_t i = r.prompt_token_ids.size(); i < r.all_token_ids.size(); ++i) ++counts[r.all_token_ids[i]];
    for (const auto& [t, c] : counts) {
      if (t < 0 || t >= vocab) continue;
      logits[t] -= static_cast<float>(s.frequency_penalty * c + s.presence_penalty);
    }
  }
}

// The `top` most likely tokens of `logits` with their log-probabilities (logit − lse),
// most likely first, ties by lower id. top = 1 (the OpenAI `logprobs: 1`) is the first
// maximum, without sorting the vocabulary.
std::vector<TokenLogprob> TopLogprobs(const float* logits, int64_t vocab, int64_t top, float lse) {
  const int64_t k = std::min<int64_t>(top, vocab);
  std::vector<TokenLogprob> out;
  if (k <= 0) return out;
  out.reserve(static_cast<size_t>(k));
  if (k == 1) {
    const int64_t id = FirstMax(logits, vocab);
    out.push_back({static_cast<int32_t>(id), logits[id] - lse});
    return out;
  }
  std::vector<int32_t> ids(static_cast<size_t>(vocab));
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int32_t a, int32_t b) {
    return logits[a] != logits[b] ? logits[a] > logits[b] : a < b;
  });
  for (int64_t i = 0; i < k; ++i) out.push_back({ids[i], logits[ids[i]] - lse});
  return out;
}

int32_t Argmax(const float* x, int64_t n) {
  return static_cast<int32_t>(FirstMax(x, n));  // first of equal maxima
}

// The tokens a draw may pick (temperature, then top-k, min-p, top-p): `ids[0, keep)`
// with unnormalised weights `probs` (indexed by token id).
struct Candidates {
  std::vector<int32_t> ids;
  std::vector<float> probs;
  size_t keep = 0;
};

Candidates Truncate(const float* logits, int64_t vocab, const SamplingParams& s) {
  Candidates c;
  const float inv_t = static_cast<float>(1.0 / s.temperature);
  const float m = *std::max_element(logits, logits + vocab) * inv_t;
  c.ids.resize(vocab);
  std::iota(c.ids.begin(), c.ids.end(), 0);
  c.probs.resize(vocab);  // unnormalised
  std::vector<int32_t>& ids = c.ids;
  std::vector<float>& probs = c.probs;
  for (int64_t i = 0; i < vocab; ++i) probs[i] = std::exp(logits[i] * inv_t - m);
  auto by_prob = [&](int32_t a, int32_t b) { return probs[a] != probs[b] ? probs[a] > probs[b] : a < b; };
  size_t keep = ids.size();
  if (s.top_k > 0 && s.top_k < vocab) {
    std::partial_sort(ids.begin(), ids.begin() + s.top_k, ids.end(), by_prob);
    keep = static_cast<size_t>(s.top_k);
  } else if (s.top_p < 1.0 || s.min_p > 0.0) {
    std::sort(ids.begin(), ids.end(), by_prob);
  }
  if (s.min_p > 0.0) {
    const float threshold = static_cast<float>(s.min_p) * probs[ids[0]];
    size_t k = 1;
    while (k < keep && probs[ids[k]] >= threshold) ++k;
    keep = k;
  }
  if (s.top_p < 1.0) {
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += probs[ids[i]];
    double cum = 0;
    size_t k = 0;
    while (k < keep) {
      cum += probs[ids[k++]];
      if (cum >= s.top_p * total) break;
    }
    keep = std::max<size_t>(k, 1);
  }
  c.keep = keep;
  return c;
}

int32_t Draw(float* logits, int64_t vocab, LlmRequest& r) {
  const Candidates c = Truncate(logits, vocab, r.sampling);
  const std::vector<int32_t>& ids = c.ids;
  const std::vector<float>& probs = c.probs;
  const size_t keep = c.keep;
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += probs[ids[i]];
  const double u = std::uniform_real_distribution<double>(0.0, total)(r.rng);
  double cum = 0;
  for (size_t i = 0; i < keep; ++i) {
    cum += probs[ids[i]];
    if (u < cum) return ids[i];
  }
  // Rounding left u past the sum: the last token that can be drawn (never one held back
  // at probability 0 by min_tokens or a -100 logit_bias).
  for (size_t i = keep; i-- > 0;) {
    if (probs[ids[i]] > 0) return ids[i];
  }
  return ids[keep - 1];
}

bool Truncates(const SamplingParams& s, int64_t vocab) {
  return (s.top_k > 0 && s.top_k < vocab) || s.top_p < 1.0 || s.min_p > 0.0;
}

int32_t Pick(float* logits, int64_t vocab, LlmRequest& r) {
  return r.sampling.greedy() ? Argmax(logits, vocab) : Draw(logits, vocab, r);
}

// Under a grammar (docs/structured_output.md, "Correctness of the sampling shortcut"):
// greedy and plain temperature sample unmasked and keep the token when the grammar
// accepts it, else sample again from the masked logits — the same distribution as
// masking first; top-k / top-p / min-p truncate the masked distribution, so they mask
// first. The end token only where the grammar may end; forced once nothing can follow.
int32_t PickConstrained(float* logits, int64_t vocab, LlmRequest& r) {
  GrammarConstraint& c = *r.constraint;
  if (c.IsTerminated()) {
    if (std::optional<int32_t> end = c.end_token()) return *end;
  }
  if (r.sampling.greedy() || !Truncates(r.sampling, vocab)) {
    const int32_t t = Pick(logits, vocab, r);
    if (c.TryAccept(t)) return t;
  }
  const grammar::TokenMask& mask = c.Mask();
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  int32_t first_allowed = -1;
  bool any_finite = false;
  for (int64_t id = 0; id < vocab; ++id) {
    if (!grammar::MaskHas(mask, static_cast<int32_t>(id))) {
      logits[id] = kNegInf;
    } else {
      if (first_allowed < 0) first_allowed = static_cast<int32_t>(id);
      any_finite = any_finite || logits[id] > kNegInf;
    }
  }
  if (first_allowed < 0) {
    // The vocabulary cannot continue the grammar here (no token writes a byte it
    // allows): end the output rather than break the grammar (finish "stop").
    if (std::optional<int32_t> end = c.end_token()) return *end;
    return Pick(logits, vocab, r);
  }
  // Every allowed token held back (logit_bias -100, min_tokens): the grammar wins.
  const int32_t t = any_finite ? Pick(logits, vocab, r) : first_allowed;
  c.TryAccept(t);
  return t;
}

}  // namespace

std::vector<float> Sampler::Distribution(float* logits, int64_t vocab, const LlmRequest& request) {
  ApplyPenalties(logits, vocab, request);
  const Candidates c = Truncate(logits, vocab, request.sampling);
  double total = 0;
  for (size_t i = 0; i < c.keep; ++i) total += c.probs[c.ids[i]];
  std::vector<float> out(static_cast<size_t>(vocab), 0.0f);
  if (total <= 0) {  // every kept token held back: the first kept one (as Draw would)
    out[c.ids[0]] = 1.0f;
    return out;
  }
  for (size_t i = 0; i < c.keep; ++i) out[c.ids[i]] = static_cast<float>(c.probs[c.ids[i]] / total);
  return out;
}

int32_t Sampler::GreedyToken(float* logits, int64_t vocab, const LlmRequest& request) {
  ApplyPenalties(logits, vocab, request);
  return Argmax(logits, vocab);
}

int32_t Sampler::DrawFrom(const std::vector<float>& weights, std::mt19937_64& rng) {
  double total = 0;
  for (float w : weights) total += w;
  const double u = std::uniform_real_distribution<double>(0.0, total)(rng);
  double cum = 0;
  int32_t last_positive = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    cum += weights[i];
    last_positive = static_cast<int32_t>(i);
    if (u < cum) return last_positive;
  }
  return last_positive;  // rounding left u past the sum
}

SampledToken Sampler::Describe(const float* raw_logits, int64_t vocab, int32_t token, const LlmRequest& request) {
  SampledToken out;
  out.token_id = token;
  if (!request.sampling.logprobs) return out;
  const float lse = LogSumExp(raw_logits, vocab);
  out.logprob = raw_logits[token] - lse;
  out.top = TopLogprobs(raw_logits, vocab, request.sampling.top_logprobs, lse);
  return out;
}

SampledToken Sampler::Sample(float* logits, int64_t vocab, LlmRequest& request) {
  const float lse = request.sampling.logprobs ? LogSumExp(logits, vocab) : 0.0f;
  // Logprobs are of the raw distribution: a copy of it only when the choice below changes
  // the logits in place (512 KB a row at a 128 k vocabulary; greedy alone only reads them).
  std::vector<float> copy;
  if (request.sampling.logprobs && ChangesLogits(request)) copy.assign(logits, logits + vocab);
  const float* raw = copy.empty() ? logits : copy.data();
  ApplyPenalties(logits, vocab, request);
  SampledToken out;
  if (request.constraint) {
    out.token_id = PickConstrained(logits, vocab, request);
    request.constraint->EndToken();
  } else {
    out.token_id = Pick(logits, vocab, request);
  }
  if (request.sampling.logprobs) {
    out.logprob = raw[out.token_id] - lse;
    out.top = TopLogprobs(raw, vocab, request.sampling.top_logprobs, lse);
  }
  return out;
}

}  // namespace infera::llm
