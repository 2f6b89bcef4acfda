// JsonReader: the one way infera parses a JSON document into a rapidjson::Document.
//
// Every JSON text the server reads — request bodies on every route and the files it
// loads (config.json, tokenizer.json, tokenizer_config.json, generation_config.json,
// safetensors headers) — goes through ReadJson(), which enforces two limits:
//   - size:    at most `max_bytes` bytes of text (kMaxJsonBytes by default);
//   - nesting: at most `max_depth` levels of objects/arrays (kMaxJsonDepth = 100, the
//              depth Triton accepts).
// The parse is iterative (rapidjson's kParseIterativeFlag) and the depth is counted as
// the SAX events arrive, so neither parsing nor anything that later walks the document
// recursively (Accept, the LLM tokenizer's step lists, ...) can overflow the stack,
// however deep the input. The streaming KServe infer decoder (codec/request_decoder.cc)
// has its own SAX handler; it uses the same kMaxJsonDepth.
//
// Strings must be valid UTF-8 (RFC 8259), so no invalid byte read here can reach a
// response that echoes it.
//
// Errors are InvalidArgument and name `what` plus the problem: the offset of a syntax
// error or of invalid UTF-8, or the limit that was exceeded ("... nests deeper than the
// limit of 100 levels").
//
// Thread-safe (pure functions).
//
// Usage:
//   rapidjson::Document doc;
//   RETURN_IF_ERROR(ReadJson(body, "request body", doc));
#ifndef INFERA_COMMON_JSON_READER_H_
#define INFERA_COMMON_JSON_READER_H_

#include <cstddef>
#include <string_view>

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace infera {

// Triton's limit on JSON nesting (objects and arrays, the outermost counts as 1).
inline constexpr int kMaxJsonDepth = 100;
// Default size limit. Request bodies are first bounded by --http-max-input-size (64 MiB
// by default); this bounds what a loaded file can make the server allocate.
inline constexpr size_t kMaxJsonBytes = size_t{256} << 20;

struct JsonLimits {
  size_t max_bytes = kMaxJsonBytes;
  int max_depth = kMaxJsonDepth;
};

// Parses `text` into `doc` (numbers keep full precision). InvalidArgument naming `what`
// on malformed JSON, trailing garbage, or a text over either limit; `doc` is then
// unspecified.
absl::Status ReadJson(std::string_view text, std::string_view what, rapidjson::Document& doc,
                      const JsonLimits& limits = {});

}  // namespace infera

#endif  // INFERA_COMMON_JSON_READER_H_
