#include "http/content_coding.h"

#include <zlib.h>

#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

// zlib's own deflate, as a client compresses: gzip (31), zlib (15) or raw (-15) framing.
std::string Compress(std::string_view data, int window_bits) {
  z_stream stream{};
  EXPECT_EQ(deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&stream, data.size()) + 64, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}
std::string Gzip(std::string_view data) { return Compress(data, 31); }
std::string Zlib(std::string_view data) { return Compress(data, 15); }
std::string RawDeflate(std::string_view data) { return Compress(data, -15); }

std::string RandomBytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(rng());
  return out;
}

std::string Text(size_t n) {
  std::string out;
  while (out.size() < n) out += "{\"name\":\"INPUT0\",\"datatype\":\"INT32\",\"data\":[1,2,3]},";
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> Inflate(ContentCoding coding, std::string_view body, size_t max = 64 << 20) {
  std::string out = "stale";
  absl::Status status = InflateBody(coding, body, max, &out);
  if (!status.ok()) return status;
  return out;
}

TEST(ParseContentEncodingTest, NamesOneCoding) {
  EXPECT_EQ(*ParseContentEncoding("gzip"), ContentCoding::kGzip);
  EXPECT_EQ(*ParseContentEncoding("GZip"), ContentCoding::kGzip);
  EXPECT_EQ(*ParseContentEncoding("x-gzip"), ContentCoding::kGzip);
  EXPECT_EQ(*ParseContentEncoding(" deflate "), ContentCoding::kDeflate);
  EXPECT_EQ(*ParseContentEncoding("identity"), ContentCoding::kIdentity);
  EXPECT_EQ(*ParseContentEncoding(""), ContentCoding::kIdentity);
  EXPECT_EQ(*ParseContentEncoding("identity, gzip"), ContentCoding::kGzip);
  EXPECT_EQ(*ParseContentEncoding("deflate,identity,"), ContentCoding::kDeflate);
}

TEST(ParseContentEncodingTest, RefusesOtherAndStackedCodings) {
  auto br = ParseContentEncoding("br");
  EXPECT_EQ(br.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(br.status().message()), HasSubstr("'br' is not supported"));
  EXPECT_EQ(ParseContentEncoding("compress").status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(ParseContentEncoding("gzipx").status().code(), absl::StatusCode::kUnimplemented);
  auto stacked = ParseContentEncoding("deflate, gzip");
  EXPECT_EQ(stacked.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(std::string(stacked.status().message()), HasSubstr("more than one coding"));
}

TEST(InflateBodyTest, RoundTripsEveryFramingAndSize) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{100}, size_t{70000}, size_t{1 << 20}}) {
    for (const std::string& data : {Text(size), RandomBytes(size, static_cast<uint32_t>(size))}) {
      EXPECT_EQ(*Inflate(ContentCoding::kGzip, Gzip(data)), data) << size;
      EXPECT_EQ(*Inflate(ContentCoding::kDeflate, Zlib(data)), data) << size;
      EXPECT_EQ(*Inflate(ContentCoding::kDeflate, RawDeflate(data)), data) << size;
    }
  }
}

TEST(InflateBodyTest, AnEmptyBodyStaysEmpty) {
  EXPECT_EQ(*Inflate(ContentCoding::kGzip, ""), "");
  EXPECT_EQ(*Inflate(ContentCoding::kDeflate, ""), "");
}

TEST(InflateBodyTest, ConcatenatedGzipMembersAreOneBody) {  // RFC 1952 section 2.2
  const std::string body = Gzip("first ") + Gzip("") + Gzip(Text(100000));
  EXPECT_EQ(*Inflate(ContentCoding::kGzip, body), "first " + Text(100000));
}

TEST(InflateBodyTest, TheLimitIsExact) {
  const std::string data = Text(100000);
  EXPECT_EQ(*Inflate(ContentCoding::kGzip, Gzip(data), data.size()), data);
  auto over = Inflate(ContentCoding::kGzip, Gzip(data), data.size() - 1);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(over.status().message()), HasSubstr("maximum allowed value of 99999 bytes"));
  EXPECT_EQ(Inflate(ContentCoding::kDeflate, Zlib("x"), 0).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(InflateBodyTest, ABombStopsAtTheLimitWithoutAllocatingItsSize) {
  const std::string zeros(16 << 20, '\0');  // ~16 KiB compressed
  const std::string bomb = Gzip(zeros);
  ASSERT_LT(bomb.size(), 100u << 10);
  const size_t limit = 1 << 20;
  std::string out;
  absl::Status status = InflateBody(ContentCoding::kGzip, bomb, limit, &out);
  EXPECT_EQ(status.code(), absl::StatusCode::kOutOfRange);
  EXPECT_LE(out.capacity(), 2 * limit);  // never the 16 MiB it would inflate to
  // Many members, each small, add up the same way.
  std::string members;
  const std::string member = Gzip(std::string(1 << 16, 'a'));
  for (int i = 0; i < 32; ++i) members += member;
  EXPECT_EQ(Inflate(ContentCoding::kGzip, members, limit).status().code(), absl::StatusCode::kOutOfRange);
}

TEST(InflateBodyTest, EveryTruncationIsRefused) {
  const std::string data = Text(5000);
  for (const auto& [coding, body] : {std::pair{ContentCoding::kGzip, Gzip(data)},
                                     std::pair{ContentCoding::kDeflate, Zlib(data)},
                                     std::pair{ContentCoding::kDeflate, RawDeflate(data)}}) {
    for (size_t cut = 1; cut < body.size(); ++cut) {
      auto result = Inflate(coding, body.substr(0, cut));
      ASSERT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << cut;
    }
    EXPECT_THAT(std::string(Inflate(coding, body.substr(0, body.size() - 1)).status().message()),
                HasSubstr("truncated"));
  }
}

TEST(InflateBodyTest, CorruptStreamsNameTheProblem) {
  auto not_gzip = Inflate(ContentCoding::kGzip, R"({"inputs": []})");
  EXPECT_EQ(not_gzip.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(not_gzip.status().message()), HasSubstr("gzip body is corrupt"));

  std::string bad_crc = Gzip(Text(1000));
  bad_crc[bad_crc.size() - 6] ^= 0x55;  // in the CRC-32 trailer
  EXPECT_THAT(std::string(Inflate(ContentCoding::kGzip, bad_crc).status().message()), HasSubstr("check"));

  std::string bad_adler = Zlib(Text(1000));
  bad_adler.back() ^= 0x55;
  EXPECT_THAT(std::string(Inflate(ContentCoding::kDeflate, bad_adler).status().message()), HasSubstr("check"));

  auto trailing = Inflate(ContentCoding::kDeflate, Zlib("abc") + "xyz");
  EXPECT_EQ(trailing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(trailing.status().message()), HasSubstr("3 bytes after the end"));

  EXPECT_EQ(Inflate(ContentCoding::kGzip, Gzip("abc") + "xyz").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(InflateBodyTest, RandomBytesNeverSucceedSilentlyAsGzip) {
  for (uint32_t seed = 0; seed < 200; ++seed) {
    auto result = Inflate(ContentCoding::kGzip, RandomBytes(1 + seed * 7, seed));
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument) << seed;
  }
}

HttpRequest Request(std::string body, std::vector<std::pair<std::string, std::string>> headers) {
  HttpRequest request;
  request.method = "POST";
  request.target = "/v2/models/m/infer";
  request.headers = std::move(headers);
  request.body = std::move(body);
  return request;
}

TEST(DecodeRequestBodyTest, InflatesAndLeavesAnIdentityRequest) {
  const std::string json = Text(1000);
  const std::string gz = Gzip(json);
  HttpRequest request = Request(gz, {{"content-length", std::to_string(gz.size())},
                                     {"content-encoding", "gzip"},
                                     {"inference-header-content-length", "1000"}});
  EXPECT_EQ(DecodeRequestBody(&request, 1 << 20), std::nullopt);
  EXPECT_EQ(request.body, json);
  EXPECT_EQ(request.Header("content-encoding"), std::nullopt);
  EXPECT_EQ(request.Header("content-length"), "1000");
  EXPECT_EQ(request.Header("inference-header-content-length"), "1000");
}

TEST(DecodeRequestBodyTest, IdentityKeepsTheBody) {
  HttpRequest request = Request("plain", {{"content-encoding", "identity"}});
  EXPECT_EQ(DecodeRequestBody(&request, 1 << 20), std::nullopt);
  EXPECT_EQ(request.body, "plain");
  EXPECT_EQ(request.Header("content-encoding"), std::nullopt);
}

TEST(DecodeRequestBodyTest, AnswersEachFailure) {
  HttpRequest br = Request("x", {{"content-encoding", "br"}});
  auto unsupported = DecodeRequestBody(&br, 1 << 20);
  ASSERT_TRUE(unsupported.has_value());
  EXPECT_EQ(unsupported->status, 415);
  EXPECT_THAT(unsupported->body, HasSubstr("'br'"));
  EXPECT_THAT(unsupported->headers,
              testing::Contains(std::pair<std::string, std::string>("Accept-Encoding", "gzip, deflate")));

  // Two fields are one list: stacked codings are refused.
  HttpRequest two = Request(Gzip(Zlib("x")), {{"content-encoding", "deflate"}, {"content-encoding", "gzip"}});
  EXPECT_EQ(DecodeRequestBody(&two, 1 << 20)->status, 415);

  HttpRequest bomb = Request(Gzip(std::string(1 << 20, '\0')), {{"content-encoding", "gzip"}});
  auto too_large = DecodeRequestBody(&bomb, 1000);
  ASSERT_TRUE(too_large.has_value());
  EXPECT_EQ(too_large->status, 413);
  EXPECT_THAT(too_large->body, HasSubstr("1000 bytes"));

  HttpRequest corrupt = Request("{\"inputs\":[]}", {{"content-encoding", "deflate"}});
  auto bad = DecodeRequestBody(&corrupt, 1 << 20);
  ASSERT_TRUE(bad.has_value());
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("deflate body"));
}

}  // namespace
}  // namespace infera
