#include "tools/bench/bench_options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace infera::bench {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<BenchOptions> Parse(std::vector<std::string> args) { return ParseBenchOptions(args); }

TEST(BenchOptionsTest, DefaultsAreLoopbackAndBounded) {
  auto o = Parse({"-m", "simple"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->model, "simple");
  EXPECT_EQ(o->host, "127.0.0.1");
  EXPECT_EQ(o->port, 8000);
  EXPECT_EQ(o->protocol, "http");
  EXPECT_EQ(o->batch_size, 1);
  EXPECT_FALSE(o->concurrency_range.has_value());  // concurrency 1
  EXPECT_GT(o->max_duration_s, 0);
  EXPECT_FALSE(o->binary_inputs);
}

TEST(BenchOptionsTest, PerfAnalyzerFlagNames) {
  auto o = Parse({"-m", "resnet18", "-x", "1", "-u", "localhost:8001", "-i", "http", "-b", "4",
                  "--concurrency-range", "1:64:x2", "--measurement-interval", "500", "-f", "out.csv",
                  "--input-data", "zero", "--shape", "INPUT0:3,224,224", "--input-tensor-format", "binary",
                  "--output-tensor-format=binary", "--percentile=99", "-l", "100", "-s", "5", "-r", "20"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->model_version, "1");
  EXPECT_EQ(o->host, "localhost");
  EXPECT_EQ(o->port, 8001);
  EXPECT_EQ(o->batch_size, 4);
  ASSERT_TRUE(o->concurrency_range.has_value());
  EXPECT_EQ(o->concurrency_range->Levels().back(), 64);
  EXPECT_EQ(o->measurement_interval_ms, 500);
  EXPECT_EQ(o->csv_file, "out.csv");
  EXPECT_EQ(o->input.mode, InputDataMode::kZero);
  EXPECT_EQ(o->shapes.at("INPUT0"), (Shape{3, 224, 224}));
  EXPECT_TRUE(o->binary_inputs);
  EXPECT_TRUE(o->binary_outputs);
  EXPECT_EQ(o->percentile, 99);
  EXPECT_EQ(o->latency_threshold_ms, 100);
  EXPECT_EQ(o->stability_percentage, 5);
  EXPECT_EQ(o->max_trials, 20);
}

TEST(BenchOptionsTest, RequestRateWithPoisson) {
  auto o = Parse({"-m", "m", "--request-rate-range", "100:400:+100", "--request-distribution", "poisson"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->request_rate_range->Levels().size(), 4u);
  EXPECT_EQ(o->distribution, ArrivalDistribution::kPoisson);
}

TEST(BenchOptionsTest, OpenAiStreaming) {
  auto o = Parse({"-m", "fortune", "--service-kind", "openai", "--endpoint-type", "chat", "--input-tokens", "32",
                  "--output-tokens", "16", "--concurrency-range", "1:8:x2"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->service_kind, "openai");
  EXPECT_EQ(o->endpoint_type, "chat");
  EXPECT_EQ(o->input_tokens, 32);
  EXPECT_EQ(o->output_tokens, 16);
}

TEST(BenchOptionsTest, GrpcDefaultsToTritonsPort) {
  auto o = Parse({"-m", "m", "-i", "grpc"});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->port, 8001);
  auto explicit_url = Parse({"-m", "m", "-i", "grpc", "-u", "127.0.0.1:9"});
  EXPECT_EQ(explicit_url->port, 9);
}

TEST(BenchOptionsTest, InputDataFileAndIntRange) {
  auto o = Parse({"-m", "m", "--input-data", "/tmp/data.json", "--int-range", "5:10", "--seed", "3"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->input.mode, InputDataMode::kFile);
  EXPECT_EQ(o->input.file, "/tmp/data.json");
  EXPECT_EQ(o->input.int_low, 5);
  EXPECT_EQ(o->input.int_high, 10);
  EXPECT_EQ(o->input.seed, 3u);
}

TEST(BenchOptionsTest, Errors) {
  EXPECT_THAT(std::string(Parse({}).status().message()), HasSubstr("-m MODEL is required"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "--nope"}).status().message()), HasSubstr("unknown flag"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "-b"}).status().message()), HasSubstr("needs a value"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "-b", "0"}).status().message()), HasSubstr("--batch-size"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "--concurrency-range", "1:8", "--request-rate-range", "5"})
                              .status()
                              .message()),
              HasSubstr("not both"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "--concurrency-range", "1.5"}).status().message()),
              HasSubstr("integers"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "-u", "nohost"}).status().message()), HasSubstr("HOST:PORT"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "-i", "ws"}).status().message()), HasSubstr("http, grpc"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "--service-kind", "openai", "--check"}).status().message()),
              HasSubstr("KServe"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "--service-kind", "openai", "-i", "grpc"}).status().message()),
              HasSubstr("http only"));
  EXPECT_THAT(std::string(Parse({"-m", "m", "--check=1"}).status().message()), HasSubstr("takes no value"));
}

TEST(BenchOptionsTest, HelpListsEveryPerfAnalyzerFlag) {
  auto o = Parse({"--help"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
  const std::string help = BenchHelpText();
  for (const char* flag : {"-m, --model-name", "-u, --url", "-i, --protocol", "-b, --batch-size",
                           "--concurrency-range", "--request-rate-range", "--measurement-interval",
                           "-f, --csv", "--json", "--plot"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
}

TEST(BenchOptionsTest, GrpcStreaming) {
  auto o = Parse({"-m", "simple", "-i", "grpc", "--streaming", "--concurrency-range", "1:64:x8"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->streaming);
  EXPECT_EQ(o->protocol, "grpc");
  EXPECT_EQ(o->port, 8001);
  // Open loop over streams is allowed: a stream per connection slot.
  auto open = Parse({"-m", "simple", "-i", "grpc", "--streaming", "--request-rate-range", "100"});
  ASSERT_TRUE(open.ok()) << open.status();
  EXPECT_TRUE(open->streaming);
  auto unary = Parse({"-m", "simple", "-i", "grpc"});
  ASSERT_TRUE(unary.ok()) << unary.status();
  EXPECT_FALSE(unary->streaming);
}

TEST(BenchOptionsTest, StreamingRejectedOutsideGrpc) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-m", "simple", "--streaming"},                                   // HTTP by default
           {"-m", "simple", "-i", "http", "--streaming"},                     // explicit HTTP
           {"-m", "simple", "--streaming", "--input-tensor-format", "binary"},
           {"-m", "fortune", "--service-kind", "openai", "--streaming"},      // OpenAI streams anyway
           {"-m", "fortune", "--service-kind", "openai", "-i", "grpc", "--streaming"}}) {
    auto o = Parse(args);
    ASSERT_FALSE(o.ok()) << args.back();
    EXPECT_EQ(o.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(o.status().message(), HasSubstr("--streaming")) << o.status();
    EXPECT_THAT(o.status().message(), HasSubstr("-i grpc")) << o.status();
  }
}

TEST(BenchOptionsTest, StreamingIsASwitch) {
  auto o = Parse({"-m", "simple", "-i", "grpc", "--streaming=yes"});
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr("--streaming takes no value"));
  EXPECT_THAT(BenchHelpText(), HasSubstr("--streaming"));
}

TEST(BenchOptionsTest, PerfAnalyzersGrpcTlsFlags) {
  auto o = Parse({"-m", "simple", "-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file",
                  "ca.pem", "--ssl-grpc-private-key-file=client.key", "--ssl-grpc-certificate-chain-file",
                  "client.pem"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->grpc_tls.use_ssl);
  EXPECT_EQ(o->grpc_tls.root_certificates_file, "ca.pem");
  EXPECT_EQ(o->grpc_tls.private_key_file, "client.key");
  EXPECT_EQ(o->grpc_tls.certificate_chain_file, "client.pem");
  for (const char* flag : {"--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file",
                           "--ssl-grpc-private-key-file", "--ssl-grpc-certificate-chain-file"}) {
    EXPECT_THAT(BenchHelpText(), HasSubstr(flag));
  }
  struct Case {
    std::vector<std::string> args;
    const char* needle;
  };
  for (const Case& c : std::vector<Case>{
           {{"-m", "simple", "--ssl-grpc-use-ssl"}, "need -i grpc"},
           {{"-m", "simple", "-i", "grpc", "--ssl-grpc-root-certifications-file", "ca.pem"}, "need --ssl-grpc-use-ssl"},
           {{"-m", "simple", "-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-private-key-file", "k"}, "go together"},
           {{"-m", "simple", "-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-certificate-chain-file", "c"}, "go together"},
           {{"-m", "simple", "-i", "grpc", "--ssl-grpc-use-ssl=true"}, "takes no value"},
           {{"-m", "simple", "-i", "grpc", "--ssl-grpc-use-ssl", "--ssl-grpc-root-certifications-file="}, "non-empty"}}) {
    auto parsed = Parse(c.args);
    ASSERT_FALSE(parsed.ok()) << c.needle;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.needle)) << parsed.status();
  }
}

}  // namespace
}  // namespace infera::bench

namespace infera::bench {
namespace {

std::string ErrorOf(std::vector<std::string> args) {
  auto o = ParseBenchOptions(args);
  return o.ok() ? std::string("(parsed)") : std::string(o.status().message());
}

TEST(BenchOptionsTest, MeasurementModeFlags) {
  auto o = ParseBenchOptions({"-m", "m", "--measurement-mode", "count_windows", "--measurement-request-count", "20"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->measurement_mode, MeasurementMode::kCountWindows);
  EXPECT_EQ(o->measurement_request_count, 20);
  EXPECT_FALSE(o->measurement_interval_given);
  EXPECT_THAT(ErrorOf({"-m", "m", "--measurement-mode", "windows"}),
              HasSubstr("--measurement-mode: 'windows' must be time_windows or count_windows"));
  EXPECT_THAT(ErrorOf({"-m", "m", "--measurement-request-count", "0"}), HasSubstr("--measurement-request-count"));
}

TEST(BenchOptionsTest, VerboseStringDataImages) {
  auto o = ParseBenchOptions({"-m", "m", "-v", "--string-data", "hello world", "--images", "photos"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->verbose);
  EXPECT_EQ(o->input.string_data, "hello world");
  EXPECT_EQ(o->images_dir, "photos");
  EXPECT_THAT(ErrorOf({"-m", "m", "--string-data="}), HasSubstr("--string-data: needs a non-empty value"));
}

TEST(BenchOptionsTest, SyncAsyncAndMaxThreadsAreAcceptedWithOneNoteEach) {
  auto o = ParseBenchOptions({"-m", "m", "--sync", "--async", "--max-threads", "16", "--max-threads=4"});
  ASSERT_TRUE(o.ok()) << o.status();
  ASSERT_EQ(o->notes.size(), 2u);  // one for --sync/--async, one for --max-threads
  EXPECT_THAT(o->notes[0], HasSubstr("--sync/--async have no effect"));
  EXPECT_THAT(o->notes[1], HasSubstr("--max-threads has no effect"));
  EXPECT_THAT(ErrorOf({"-m", "m", "--max-threads", "0"}), HasSubstr("--max-threads: '0' is not a number"));
  EXPECT_THAT(ErrorOf({"-m", "m", "--sync=yes"}), HasSubstr("--sync takes no value"));
}

TEST(BenchOptionsTest, RequestIntervalsAreOneOpenLoopLevelAtTheirMeanRate) {
  const std::string path = ::testing::TempDir() + "/intervals.txt";
  std::ofstream(path) << "1000\n3000\r\n\n2000\n";  // 2 ms on average: 500 req/s
  auto o = ParseBenchOptions({"-m", "m", "--request-intervals", path});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->request_gaps_ns, (std::vector<int64_t>{1000000, 3000000, 2000000}));
  ASSERT_TRUE(o->request_rate_range.has_value());
  EXPECT_EQ(o->request_rate_range->Levels(), (std::vector<double>{500}));
  EXPECT_EQ(o->distribution, ArrivalDistribution::kIntervals);

  EXPECT_THAT(ErrorOf({"-m", "m", "--request-intervals", path, "--concurrency-range", "4"}),
              HasSubstr("not with --concurrency-range"));
  EXPECT_THAT(ErrorOf({"-m", "m", "--request-intervals", "/no/such/file"}), HasSubstr("cannot read /no/such/file"));
  std::ofstream(path) << "1000\nsoon\n";
  EXPECT_THAT(ErrorOf({"-m", "m", "--request-intervals", path}), HasSubstr("line 2: 'soon' is not a gap"));
  std::ofstream(path) << "0\n0\n";
  EXPECT_THAT(ErrorOf({"-m", "m", "--request-intervals", path}), HasSubstr("no gap above 0"));
}

TEST(BenchOptionsTest, ErrorsAreOneLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-m", "m", "--nope"},
                                                                 {"-m", "m", "-b", "zero"},
                                                                 {"-m", "m", "--measurement-mode", "x"},
                                                                 {"-m", "m", "-u"}}) {
    const std::string error = ErrorOf(args);
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_EQ(error.find("--help"), std::string::npos) << error;  // the command adds "see ... --help"
  }
}

TEST(BenchOptionsTest, HelpFitsOneHundredColumnsAndShowsInputDataExamples) {
  const std::string help = BenchHelpText();
  std::istringstream lines(help);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 100u) << line;
  for (const char* text : {"--measurement-mode", "--measurement-request-count", "-v, --verbose", "--max-threads",
                           "--string-data", "--request-intervals", "--sync", "--async", "--images",
                           "\"IMAGE\": {\"b64\"", "\"TEXT\": [\"The quick brown fox.\"]", "resnet18_classify",
                           "text_embed"}) {
    EXPECT_THAT(help, HasSubstr(text));
  }
}

}  // namespace
}  // namespace infera::bench
