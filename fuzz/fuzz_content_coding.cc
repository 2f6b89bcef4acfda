// Fuzz target: request content codings (http/content_coding.h).
//
// Input: one selector byte (bit 0: gzip or deflate; bits 1-3: the inflated-size limit),
// then a compressed body. Oracles besides ASan/UBSan: InflateBody either succeeds with at
// most `limit` bytes, or fails with InvalidArgument (corrupt, truncated) or OutOfRange (the
// limit); DecodeRequestBody's answers are 400, 413 or 415 only; the same bytes as a
// Content-Encoding value parse or are Unimplemented; and the bytes themselves, deflated by
// zlib in the coding's framing, inflate back to themselves.
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/content_coding.h"
#include "http/http_message.h"

namespace {

constexpr size_t kLimits[] = {0, 1, 100, 4096, 65536, 1 << 20, 4 << 20, 16 << 20};

std::string Deflate(std::string_view data, int window_bits) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    std::abort();
  }
  std::string out(deflateBound(&stream, data.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto coding = (data[0] & 1) ? infera::ContentCoding::kDeflate : infera::ContentCoding::kGzip;
  const size_t limit = kLimits[(data[0] >> 1) & 7];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);

  std::string out;
  const absl::Status status = infera::InflateBody(coding, body, limit, &out);
  if (status.ok() && out.size() > limit) std::abort();
  if (!status.ok() && status.code() != absl::StatusCode::kInvalidArgument &&
      status.code() != absl::StatusCode::kOutOfRange) {
    std::abort();
  }

  infera::HttpRequest request;
  request.headers = {{"content-encoding", coding == infera::ContentCoding::kGzip ? "gzip" : "deflate"}};
  request.body = std::string(body);
  if (auto refused = infera::DecodeRequestBody(&request, limit)) {
    if (refused->status != 400 && refused->status != 413) std::abort();
  } else if (request.body.size() > limit || request.Header("content-encoding")) {
    std::abort();
  }

  const auto parsed = infera::ParseContentEncoding(body);
  if (!parsed.ok() && parsed.status().code() != absl::StatusCode::kUnimplemented) std::abort();

  if (body.size() <= 4096) {
    const std::string compressed = Deflate(body, coding == infera::ContentCoding::kGzip ? 31 : 15);
    if (!infera::InflateBody(coding, compressed, body.size(), &out).ok() || out != body) std::abort();
  }
  return 0;
}
