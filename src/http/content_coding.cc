#include "http/content_coding.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>

#include "common/str_cat.h"
#include "http/http_status.h"

namespace infera {
namespace {

constexpr size_t kInitialOutputBytes = 4 << 10;
// zlib counts in uInt: feed and take at most this much per call.
constexpr size_t kMaxZlibChunk = 1u << 30;

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const char c = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] + ('a' - 'A')) : a[i];
    if (c != lower[i]) return false;
  }
  return true;
}

const char* CodingName(ContentCoding coding) { return coding == ContentCoding::kGzip ? "gzip" : "deflate"; }

// RFC 1950 section 2.2: CM 8 (deflate), a window of at most 32 KiB, FCHECK making the
// first two bytes a multiple of 31.
bool HasZlibHeader(std::string_view body) {
  if (body.size() < 2) return false;
  const auto cmf = static_cast<unsigned char>(body[0]);
  const auto flg = static_cast<unsigned char>(body[1]);
  return (cmf & 0x0f) == 8 && (cmf >> 4) <= 7 && ((cmf << 8) | flg) % 31 == 0;
}

struct InflateEnd {
  void operator()(z_stream* stream) const { inflateEnd(stream); }
};

}  // namespace

absl::StatusOr<ContentCoding> ParseContentEncoding(std::string_view field_value) {
  ContentCoding result = ContentCoding::kIdentity;
  while (true) {
    const size_t comma = field_value.find(',');
    const std::string_view coding = TrimSpaces(field_value.substr(0, comma));
    if (!coding.empty() && !EqualsIgnoreCase(coding, "identity")) {
      ContentCoding parsed;
      if (EqualsIgnoreCase(coding, "gzip") || EqualsIgnoreCase(coding, "x-gzip")) {
        parsed = ContentCoding::kGzip;
      } else if (EqualsIgnoreCase(coding, "deflate")) {
        parsed = ContentCoding::kDeflate;
      } else {
        return absl::UnimplementedError(StrCat("Content-Encoding '", coding,
                                               "' is not supported; send gzip, deflate or identity"));
      }
      if (result != ContentCoding::kIdentity) {
        return absl::UnimplementedError(StrCat("Content-Encoding '", TrimSpaces(field_value),
                                               "' applies more than one coding; send one of gzip, deflate"));
      }
      result = parsed;
    }
    if (comma == std::string_view::npos) break;
    field_value.remove_prefix(comma + 1);
  }
  return result;
}

absl::Status InflateBody(ContentCoding coding, std::string_view compressed, size_t max_bytes, std::string* out) {
  out->clear();
  if (compressed.empty()) return absl::OkStatus();
  const bool gzip = coding == ContentCoding::kGzip;
  z_stream stream{};
  // gzip: 15 + 16 (a gzip wrapper); deflate: 15 (zlib) or -15 (raw).
  const int window_bits = gzip ? 15 + 16 : (HasZlibHeader(compressed) ? 15 : -15);
  if (inflateInit2(&stream, window_bits) != Z_OK) return absl::InternalError("zlib: inflateInit2 failed");
  std::unique_ptr<z_stream, InflateEnd> guard(&stream);
  const size_t limit = max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1;  // one byte over proves "too large"
  out->resize(std::min(limit, std::max(kInitialOutputBytes, std::min(compressed.size(), SIZE_MAX / 4) * 4)));
  size_t produced = 0;
  size_t fed = 0;  // bytes of `compressed` handed to zlib
  while (true) {
    if (stream.avail_in == 0 && fed < compressed.size()) {
      const size_t chunk = std::min(compressed.size() - fed, kMaxZlibChunk);
      stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data() + fed));
      stream.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    if (produced == out->size()) out->resize(out->size() > limit / 2 ? limit : out->size() * 2);
    const size_t room = std::min(out->size() - produced, kMaxZlibChunk);
    stream.next_out = reinterpret_cast<Bytef*>(out->data() + produced);
    stream.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&stream, Z_NO_FLUSH);
    produced += room - stream.avail_out;
    if (produced > max_bytes) {
      return absl::OutOfRangeError(StrCat("Decompressed data size exceeds the maximum allowed value of ", max_bytes,
                                          " bytes. Use --http-max-input-size to increase the limit."));
    }
    const size_t unread = stream.avail_in + (compressed.size() - fed);
    if (rc == Z_STREAM_END) {
      if (unread == 0) break;
      // RFC 1952 section 2.2: a gzip body may be several members, one after the other.
      if (gzip && inflateReset(&stream) == Z_OK) continue;
      return absl::InvalidArgumentError(
          StrCat("Content-Encoding deflate body has ", unread, " bytes after the end of its stream"));
    }
    if (rc == Z_OK) continue;
    // Z_BUF_ERROR with room left: zlib needs input that is not there.
    if (rc == Z_BUF_ERROR && stream.avail_out != 0) {
      return absl::InvalidArgumentError(StrCat("Content-Encoding ", CodingName(coding),
                                               " body is truncated: it ends before the end of its stream"));
    }
    if (rc == Z_BUF_ERROR) continue;  // the output was full: it grows
    if (rc == Z_MEM_ERROR) return absl::ResourceExhaustedError("zlib: out of memory while inflating");
    return absl::InvalidArgumentError(StrCat("Content-Encoding ", CodingName(coding), " body is corrupt: ",
                                             stream.msg != nullptr ? stream.msg : "invalid stream"));
  }
  out->resize(produced);
  return absl::OkStatus();
}

std::optional<HttpResponse> DecodeRequestBody(HttpRequest* request, size_t max_bytes) {
  std::string field_value;
  for (const auto& [name, value] : request->headers) {
    if (name != "content-encoding") continue;
    if (!field_value.empty()) field_value += ", ";
    field_value += value;
  }
  absl::StatusOr<ContentCoding> coding = ParseContentEncoding(field_value);
  if (!coding.ok()) {
    const auto message = coding.status().message();
    HttpResponse response = ErrorResponse(415, std::string_view(message.data(), message.size()));
    response.headers.emplace_back("Accept-Encoding", "gzip, deflate");
    return response;
  }
  if (*coding != ContentCoding::kIdentity) {
    std::string inflated;
    if (absl::Status status = InflateBody(*coding, request->body, max_bytes, &inflated); !status.ok()) {
      // OutOfRange is the body limit here (413, as the compressed body's own limit).
      if (status.code() == absl::StatusCode::kOutOfRange) {
        return ErrorResponse(413, std::string_view(status.message().data(), status.message().size()));
      }
      return ErrorResponse(status);
    }
    request->body = std::move(inflated);
  }
  auto& headers = request->headers;
  headers.erase(std::remove_if(headers.begin(), headers.end(),
                               [](const auto& header) { return header.first == "content-encoding"; }),
                headers.end());
  for (auto& [name, value] : headers) {
    if (name == "content-length") value = std::to_string(request->body.size());
  }
  return std::nullopt;
}

}  // namespace infera
