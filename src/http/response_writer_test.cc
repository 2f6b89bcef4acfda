#include "http/response_writer.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera::http_internal {
namespace {

using ::testing::HasSubstr;

std::string Concat(const std::array<boost::asio::const_buffer, 2>& buffers) {
  std::string out;
  for (const auto& b : buffers) out.append(static_cast<const char*>(b.data()), b.size());
  return out;
}

TEST(ResponseWriterTest, HeadAndBodyGoOutAsOneGatherWriteContinuedWhereTheSocketStopped) {
  ResponseBudget budget(1 << 20);
  ResponseWriter writer(&budget);
  const auto now = std::chrono::steady_clock::now();
  const ResponseWriter::Started started =
      writer.Start(HttpResponse{200, "text/plain", "body", {{"X-A", "1"}}}, true, false, nullptr, now);
  EXPECT_EQ(started.status, 200);
  EXPECT_TRUE(started.keep_alive);
  EXPECT_TRUE(writer.active());
  EXPECT_EQ(budget.buffered(), 4);
  const std::string all = Concat(writer.Pending());
  EXPECT_EQ(all, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-A: 1\r\nContent-Length: 4\r\n\r\nbody");
  EXPECT_FALSE(writer.Advance(10));
  EXPECT_EQ(Concat(writer.Pending()), all.substr(10));
  EXPECT_FALSE(writer.Advance(all.size() - 12));
  EXPECT_EQ(Concat(writer.Pending()), "dy");
  EXPECT_TRUE(writer.Advance(2));
  writer.Finish(now, true);
  EXPECT_FALSE(writer.active());
  EXPECT_EQ(budget.buffered(), 0);
}

TEST(ResponseWriterTest, HeadOnlyKeepsTheContentLengthSendsNoBodyAndHoldsNoBudget) {
  ResponseBudget budget(1 << 20);
  ResponseWriter writer(&budget);
  writer.Start(HttpResponse{200, "text/plain", std::string(1000, 'x'), {}}, false, true, nullptr,
               std::chrono::steady_clock::now());
  EXPECT_EQ(budget.buffered(), 0);
  EXPECT_EQ(Concat(writer.Pending()),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 1000\r\n\r\n");
}

TEST(ResponseWriterTest, ABodyOverTheBudgetIsReplacedByA503AndTheCallbackDropped) {
  ResponseBudget budget(ResponseBudget::kAlwaysAdmittedBytes * 2);
  budget.Add(ResponseBudget::kAlwaysAdmittedBytes * 2);  // others hold it all
  ResponseWriter writer(&budget);
  bool called = false;
  const ResponseWriter::Started started =
      writer.Start(HttpResponse{200, "application/octet-stream", std::string(200 << 10, 'x'), {}}, true, false,
                   [&called](std::chrono::nanoseconds, bool) { called = true; }, std::chrono::steady_clock::now());
  EXPECT_EQ(started.status, 503);
  EXPECT_FALSE(started.keep_alive);
  EXPECT_EQ(budget.rejected(), 1u);
  const std::string bytes = Concat(writer.Pending());
  EXPECT_THAT(bytes, HasSubstr("HTTP/1.1 503 Service Unavailable\r\n"));
  EXPECT_THAT(bytes, HasSubstr("--http-max-buffered-response-bytes"));
  writer.Advance(bytes.size());
  writer.Finish(std::chrono::steady_clock::now(), true);
  EXPECT_FALSE(called);
  EXPECT_EQ(budget.buffered(), ResponseBudget::kAlwaysAdmittedBytes * 2);
}

TEST(ResponseWriterTest, TheCallbackGetsTheWriteTimeAndASmallBodyBufferIsKept) {
  ResponseBudget budget(1 << 20);
  ResponseWriter writer(&budget);
  std::string body = "small";
  body.reserve(1000);
  const auto start = std::chrono::steady_clock::now();
  std::chrono::nanoseconds took{};
  bool completed = false;
  writer.Start(HttpResponse{200, "text/plain", std::move(body), {}}, true, false,
               [&](std::chrono::nanoseconds t, bool c) { took = t, completed = c; }, start);
  writer.Finish(start + std::chrono::microseconds(7), true);
  EXPECT_EQ(took, std::chrono::microseconds(7));
  EXPECT_TRUE(completed);
  const std::string recycled = writer.TakeBodyBuffer();
  EXPECT_TRUE(recycled.empty());
  EXPECT_GE(recycled.capacity(), 1000u);
  // A large one is freed.
  writer.Start(HttpResponse{200, "text/plain", std::string(kKeptBodyCapacity + 1, 'x'), {}}, true, false, nullptr,
               start);
  writer.Finish(start, true);
  EXPECT_LT(writer.TakeBodyBuffer().capacity(), kKeptBodyCapacity);
}

}  // namespace
}  // namespace infera::http_internal
