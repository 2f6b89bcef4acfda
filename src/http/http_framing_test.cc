#include "http/http_framing.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

std::optional<std::string> Problem(std::initializer_list<std::string_view> content_lengths,
                                   std::initializer_list<std::string_view> transfer_encodings) {
  HttpFraming framing;
  for (std::string_view v : content_lengths) framing.AddContentLength(v);
  for (std::string_view v : transfer_encodings) framing.AddTransferEncoding(v);
  return framing.Problem();
}

TEST(HttpFramingTest, AcceptsUnambiguousFraming) {
  EXPECT_EQ(Problem({}, {}), std::nullopt);
  EXPECT_EQ(Problem({"42"}, {}), std::nullopt);
  EXPECT_EQ(Problem({}, {"chunked"}), std::nullopt);
  EXPECT_EQ(Problem({}, {" Chunked\t"}), std::nullopt);
}

TEST(HttpFramingTest, RejectsTransferEncodingsOtherThanOneChunked) {
  EXPECT_THAT(*Problem({}, {"chunked, identity"}), HasSubstr("bad Transfer-Encoding 'chunked, identity'"));
  EXPECT_THAT(*Problem({}, {"xchunked"}), HasSubstr("'xchunked'"));
  EXPECT_THAT(*Problem({}, {"identity"}), HasSubstr("'identity'"));
  EXPECT_THAT(*Problem({}, {"gzip, chunked"}), HasSubstr("only a single 'chunked'"));
  EXPECT_THAT(*Problem({}, {""}), HasSubstr("bad Transfer-Encoding ''"));
  EXPECT_THAT(*Problem({}, {"identity", "chunked"}), HasSubstr("appears more than once"));
  EXPECT_THAT(*Problem({}, {"chun\x01ked\xff"}), HasSubstr("'chun?ked?'"));
}

TEST(HttpFramingTest, RejectsAmbiguousContentLength) {
  EXPECT_THAT(*Problem({"0", "0"}, {}), HasSubstr("Content-Length: the header appears more than once"));
  EXPECT_THAT(*Problem({"0", "5"}, {}), HasSubstr("more than once"));
  EXPECT_THAT(*Problem({"5, 5"}, {}), HasSubstr("a list of lengths"));
  EXPECT_THAT(*Problem({"0"}, {"chunked"}), HasSubstr("Content-Length and Transfer-Encoding together"));
  EXPECT_THAT(*Problem({"0"}, {"identity"}), HasSubstr("Content-Length and Transfer-Encoding together"));
}

}  // namespace
}  // namespace infera
