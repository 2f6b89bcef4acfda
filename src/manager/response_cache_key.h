// ResponseCacheKey: the canonical bytes of an inference request as the response cache
// sees it — everything the answer depends on — and their hash (docs/response_cache.md,
// "The key").
//
// Two requests get equal keys exactly when they ask the same version the same question:
// model name and version, every input (name, datatype, shape, bytes; in config order after
// validation), the requested outputs with their parameters except transport-only ones, and
// the request parameters except those that only schedule or encode. Every field is
// length-prefixed, so different requests never serialise to the same bytes.
//
// Immutable after construction; thread-compatible.
#ifndef INFERA_MANAGER_RESPONSE_CACHE_KEY_H_
#define INFERA_MANAGER_RESPONSE_CACHE_KEY_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "api/infer_request.h"

namespace infera {

// The hash the cache indexes keys by. Correctness never depends on it (keys are compared
// in full); tests inject a weak one to force collisions.
using CacheKeyHash = std::function<uint64_t(std::string_view)>;
// absl::Hash over the bytes (seeded per process).
uint64_t DefaultCacheKeyHash(std::string_view bytes);

class ResponseCacheKey {
 public:
  // The key of `request` (already validated and reordered by PrepareRequest) for
  // `model` version `version`.
  static ResponseCacheKey ForRequest(std::string_view model, int64_t version, const InferRequest& request,
                                     const CacheKeyHash& hash);
  // A key of arbitrary bytes (tests).
  static ResponseCacheKey FromBytes(std::string bytes, const CacheKeyHash& hash);

  const std::string& bytes() const { return bytes_; }
  uint64_t hash() const { return hash_; }
  // Moves the bytes out (the cache keeps them in its entry); the key is empty after.
  std::string ReleaseBytes() && { return std::move(bytes_); }

 private:
  ResponseCacheKey(std::string bytes, uint64_t hash) : bytes_(std::move(bytes)), hash_(hash) {}
  std::string bytes_;
  uint64_t hash_ = 0;
};

// True for a request parameter that cannot change a request's outputs (it schedules or
// encodes the request), so it is left out of the key.
bool IsCacheNeutralRequestParameter(std::string_view name);
// The same for a requested output's parameters.
bool IsCacheNeutralOutputParameter(std::string_view name);

}  // namespace infera

#endif  // INFERA_MANAGER_RESPONSE_CACHE_KEY_H_
