#include "tools/bench/report_writers.h"
#include "tools/bench/plot_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "rapidjson/document.h"

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

RunReport SampleReport() {
  RunReport r;
  r.command_line = "infera bench -m simple --concurrency-range 1:4:x2";
  r.url = "127.0.0.1:8000";
  r.protocol = "http";
  r.model = "simple";
  r.platform = "add_sub";
  r.mode = "concurrency";
  r.latency_metric = "avg";
  r.input_format = r.output_format = "json";
  r.input_data = "random";
  r.num_payloads = 8;
  for (int c : {1, 2, 4}) {
    LevelResult l;
    l.concurrency = c;
    l.stable = c != 4;
    l.windows = 3;
    l.duration_s = 3;
    l.ok = 3000 * c;
    l.sent = l.ok + (c == 4 ? 2 : 0);
    l.errors = c == 4 ? 2 : 0;
    l.throughput_rps = 1000.0 * c;
    l.inferences_per_s = l.throughput_rps;
    LatencyHistogram h;
    for (int i = 1; i <= 100; ++i) h.Record(i * 10'000 * c);
    l.latency = LatencySummary::From(h);
    if (c == 4) l.error_counts["http 429"] = {2, "queue is full, \"retry\" <later>"};
    if (c == 2) {
      ServerBreakdown s;
      s.requests = 6000;
      s.request_us = 40;
      s.queue_us = 10;
      s.compute_infer_us = 20;
      s.overhead_us = 10;
      s.avg_batch_rows = 1;
      l.server = s;
      l.server_cpu_us_per_request = 25;
    }
    r.levels.push_back(l);
  }
  r.total_sent = 21002;
  r.total_ok = 21000;
  r.total_errors = 2;
  return r;
}

TEST(ReportWritersTest, StreamingLevelsShowTtftAndTpot) {
  RunReport r = SampleReport();
  LatencyHistogram ttft, tpot;
  ttft.Record(50'000'000);
  tpot.Record(8'000'000);
  r.levels[0].ttft = LatencySummary::From(ttft);
  r.levels[0].tpot = LatencySummary::From(tpot);
  r.levels[0].output_tokens = 640;
  r.levels[0].output_tokens_per_s = 213.3;
  EXPECT_THAT(FormatTable(r), HasSubstr("TTFT p50"));
  EXPECT_THAT(FormatCsv(r), HasSubstr(",50000.000,50000.000,8000.000,8000.000,213.300\n"));
  rapidjson::Document doc;
  doc.Parse(FormatJson(r).c_str());
  EXPECT_DOUBLE_EQ(doc["levels"][0]["ttft"]["p50_us"].GetDouble(), 50000);
  EXPECT_DOUBLE_EQ(doc["levels"][0]["output_tokens_per_s"].GetDouble(), 213.3);
}

TEST(ReportWritersTest, LatencySummaryFromHistogram) {
  LatencyHistogram h;
  for (int i = 1; i <= 100; ++i) h.Record(i * 1000);  // 1..100 us
  const LatencySummary s = LatencySummary::From(h);
  EXPECT_EQ(s.count, 100);
  EXPECT_NEAR(s.p50_us, 50, 0.5);
  EXPECT_NEAR(s.p99_us, 99, 0.5);
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  EXPECT_DOUBLE_EQ(s.mean_us, 50.5);
}

TEST(ReportWritersTest, TableHasEveryLevelServerBreakdownAndErrors) {
  const std::string table = FormatTable(SampleReport());
  EXPECT_THAT(table, HasSubstr("model simple (add_sub) at 127.0.0.1:8000"));
  EXPECT_THAT(table, HasSubstr("p99"));
  EXPECT_THAT(table, HasSubstr("server side, per request"));
  EXPECT_THAT(table, HasSubstr("2 x http 429"));
  EXPECT_THAT(table, HasSubstr("total: 21002 sent = 21000 ok + 2 errors"));
}

TEST(ReportWritersTest, TitleNamesTheLoadSchedule) {
  RunReport r = SampleReport();
  EXPECT_THAT(FormatTableTitle(r), HasSubstr("\nclosed loop (concurrency); latency in ms;"));
  r.mode = "request_rate";
  EXPECT_THAT(FormatTableTitle(r), HasSubstr("\nopen loop (request rate); latency in ms from each request's scheduled time"));
  r.request_intervals_file = "gaps.txt";
  EXPECT_THAT(FormatTableTitle(r),
              HasSubstr("\nopen loop (request intervals from gaps.txt); latency in ms from each request's scheduled time"));
}

TEST(ReportWritersTest, CsvIsRectangular) {
  const std::string csv = FormatCsv(SampleReport());
  std::istringstream lines(csv);
  std::string line;
  std::vector<size_t> columns;
  while (std::getline(lines, line)) columns.push_back(std::count(line.begin(), line.end(), ',') + 1);
  ASSERT_EQ(columns.size(), 4u);  // header + 3 levels
  for (size_t c : columns) EXPECT_EQ(c, columns[0]);
  EXPECT_THAT(csv, HasSubstr("Concurrency,Request Rate,Inferences/Second"));
  EXPECT_THAT(csv, HasSubstr("p99 latency"));
}

TEST(ReportWritersTest, JsonParsesAndCarriesTheSchema) {
  const std::string json = FormatJson(SampleReport());
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  ASSERT_FALSE(doc.HasParseError()) << json;
  EXPECT_STREQ(doc["model"].GetString(), "simple");
  ASSERT_EQ(doc["levels"].Size(), 3u);
  const auto& level = doc["levels"][2];
  EXPECT_EQ(level["concurrency"].GetInt(), 4);
  EXPECT_FALSE(level["stable"].GetBool());
  EXPECT_TRUE(level["latency"].HasMember("p99_us"));
  EXPECT_EQ(level["error_counts"]["http 429"]["count"].GetInt(), 2);
  EXPECT_STREQ(level["error_counts"]["http 429"]["example"].GetString(), "queue is full, \"retry\" <later>");
  EXPECT_DOUBLE_EQ(doc["levels"][1]["server"]["queue_us"].GetDouble(), 10);
  EXPECT_EQ(doc["totals"]["sent"].GetInt64(), doc["totals"]["ok"].GetInt64() + doc["totals"]["errors"].GetInt64());
  EXPECT_FALSE(level.HasMember("ttft"));  // KServe: no token metrics
}

// Checks that every "<tag" has a matching close, in order (well-formed for our output).
bool BalancedXml(const std::string& svg) {
  std::vector<std::string> stack;
  size_t i = 0;
  while ((i = svg.find('<', i)) != std::string::npos) {
    const size_t end = svg.find('>', i);
    if (end == std::string::npos) return false;
    std::string tag = svg.substr(i + 1, end - i - 1);
    i = end + 1;
    if (tag[0] == '?') continue;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1)) return false;
      stack.pop_back();
    } else if (tag.back() != '/') {
      stack.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return stack.empty();
}

TEST(ReportWritersTest, SvgIsWellFormedAndSelfContained) {
  RunReport report = SampleReport();
  report.model = "a<b>&\"c\"";
  const std::string svg = FormatSvgPlot(LatencySeries(report), "plot of " + report.model);
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("a&lt;b&gt;&amp;&quot;c&quot;"));
  EXPECT_THAT(svg, HasSubstr("P99"));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("<script")));
  EXPECT_THAT(svg, ::testing::Not(HasSubstr("href")));
  EXPECT_TRUE(BalancedXml(svg)) << svg;
  EXPECT_EQ(std::count(svg.begin(), svg.end(), '\n') > 10, true);
  // Three series of three points each.
  size_t circles = 0;
  for (size_t i = 0; (i = svg.find("<circle", i)) != std::string::npos; ++i) ++circles;
  EXPECT_EQ(circles, 9u);
}

TEST(ReportWritersTest, EmptyPlotStillRenders) {
  const std::string svg = FormatSvgPlot({}, "empty");
  EXPECT_TRUE(BalancedXml(svg));
}

}  // namespace
}  // namespace infera::bench

namespace infera::bench {
namespace {

TEST(PlotCommandTest, SeriesFromSavedReports) {
  auto series = SeriesFromReportJson("infera", FormatJson(SampleReport()));
  ASSERT_TRUE(series.ok()) << series.status();
  ASSERT_EQ(series->size(), 2u);
  EXPECT_EQ((*series)[1].name, "infera P99");
  ASSERT_EQ((*series)[1].points.size(), 3u);
  EXPECT_DOUBLE_EQ((*series)[1].points[2].x, 4000);
  EXPECT_EQ((*series)[1].points[2].label, "c=4");
  EXPECT_FALSE(SeriesFromReportJson("x", "{}").ok());
  EXPECT_FALSE(SeriesFromReportJson("x", R"({"levels":[{"throughput_per_s":1}]})").ok());
}

}  // namespace
}  // namespace infera::bench
