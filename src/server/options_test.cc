#include "server/options.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

TEST(OptionsTest, ParsesTritonStyleFlagsBothForms) {
  auto options = ParseServeOptions({"--model-repository", "/models", "--http-port=0",
                                    "--grpc-port", "9001", "--metrics-port=0", "--log-verbose=1",
                                    "--exit-timeout-secs", "5", "--log-format", "json"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->model_repository, "/models");
  EXPECT_EQ(options->http_port, 0);
  EXPECT_EQ(options->grpc_port, 9001);
  EXPECT_EQ(options->metrics_port, 0);
  EXPECT_EQ(options->log_verbose, 1);
  EXPECT_EQ(options->exit_timeout_secs, 5);
  EXPECT_EQ(options->log_format, "json");
}

TEST(OptionsTest, ErrorsNameTheFlag) {
  auto message = [](std::vector<std::string> args) {
    return std::string(ParseServeOptions(args).status().message());
  };
  EXPECT_THAT(message({}), HasSubstr("--model-repository is required"));
  EXPECT_THAT(message({"--model-repository=/m", "--http-port=70000"}), HasSubstr("--http-port"));
  EXPECT_THAT(message({"--model-repository=/m", "--http-port=abc"}), HasSubstr("'abc'"));
  EXPECT_THAT(message({"--model-repository=/m", "--bogus=1"}), HasSubstr("unknown flag --bogus"));
  EXPECT_THAT(message({"--model-repository"}), HasSubstr("needs a value"));
  EXPECT_THAT(message({"--model-repository=/m", "stray"}), HasSubstr("unexpected argument 'stray'"));
  EXPECT_THAT(message({"--model-repository=/m", "--log-format=xml"}), HasSubstr("text (or default), ISO8601 or json"));
}

TEST(OptionsTest, TraceRateIsTritonsIntegerOrAFraction) {
  for (const char* good : {"0", "1", "0.01", "1e-9", "1000"}) {
    auto options = ParseServeOptions({"--model-repository=/m", "--trace-rate", good});
    ASSERT_TRUE(options.ok()) << good << ": " << options.status();
  }
  EXPECT_EQ(ParseServeOptions({"--model-repository=/m", "--trace-rate=0.25"})->trace_rate, 4);
  EXPECT_EQ(ParseServeOptions({"--model-repository=/m", "--trace-rate=6"})->trace_rate, 6);
  EXPECT_EQ(ParseServeOptions({"--model-repository=/m", "--trace-rate=1"})->trace_rate, 1);
  EXPECT_FALSE(ParseServeOptions({"--model-repository=/m"})->trace_rate.has_value());
  // NaN passed both bounds; 1e-300 made round(1/P) overflow an int64_t.
  for (const char* bad : {"nan", "-nan", "NaN", "inf", "-inf", "1e-300", "1e-10", "-0.5", "1.5", "", "0.5x", "-3"}) {
    auto options = ParseServeOptions({"--model-repository=/m", "--trace-rate", bad});
    EXPECT_FALSE(options.ok()) << bad;
    EXPECT_THAT(std::string(options.status().message()), HasSubstr("--trace-rate")) << bad;
  }
}

TEST(OptionsTest, TraceConfigTakesTritonsSettings) {
  auto options = ParseServeOptions({"--model-repository=/m", "--trace-config", "triton,file=/tmp/t.json",
                                    "--trace-config=level=TIMESTAMPS", "--trace-config", "level=TENSORS",
                                    "--trace-config", "rate=4", "--trace-config", "count=6",
                                    "--trace-config", "triton,log-frequency=2", "--trace-config", "mode=triton"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->trace_file, "/tmp/t.json");
  EXPECT_EQ(options->trace_level, (std::vector<std::string>{"TIMESTAMPS", "TENSORS"}));
  EXPECT_EQ(options->trace_rate, 4);
  EXPECT_EQ(options->trace_count, 6);
  EXPECT_EQ(options->trace_log_frequency, 2);
  EXPECT_EQ(options->trace_mode, "triton");
  // The deprecated flags, the same settings.
  auto old = ParseServeOptions({"--model-repository=/m", "--trace-file=t.log", "--trace-level=TIMESTAMPS",
                                "--trace-rate=1", "--trace-count=5", "--trace-log-frequency=3"});
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_EQ(old->trace_file, "t.log");
  EXPECT_EQ(old->trace_count, 5);
  EXPECT_EQ(old->trace_log_frequency, 3);
  EXPECT_EQ(old->trace_mode, "triton");
  auto otel = ParseServeOptions({"--model-repository=/m", "--trace-config", "opentelemetry,url=http://c:4318/v1/traces"});
  ASSERT_TRUE(otel.ok());
  EXPECT_EQ(otel->trace_endpoint, "http://c:4318/v1/traces");
  EXPECT_EQ(otel->trace_mode, "opentelemetry");

  auto message = [](std::vector<std::string> args) {
    args.insert(args.begin(), "--model-repository=/m");
    return std::string(ParseServeOptions(args).status().message());
  };
  EXPECT_THAT(message({"--trace-config", "level=LOUD"}), HasSubstr("not a trace level"));
  EXPECT_THAT(message({"--trace-config", "nope=1"}), HasSubstr("unknown global trace setting 'nope'"));
  EXPECT_THAT(message({"--trace-config", "triton,url=x"}), HasSubstr("unknown triton trace setting 'url'"));
  EXPECT_THAT(message({"--trace-config", "zipkin,url=x"}), HasSubstr("unknown trace mode 'zipkin'"));
  EXPECT_THAT(message({"--trace-config", "rate"}), HasSubstr("SETTING=VALUE"));
  EXPECT_THAT(message({"--trace-config", "count=-2"}), HasSubstr("integer >= -1"));
  EXPECT_THAT(message({"--trace-config", "triton,log-frequency=x"}), HasSubstr("integer >= 0"));
  EXPECT_THAT(message({"--trace-config", "mode=zipkin"}), HasSubstr("triton or opentelemetry"));
  EXPECT_THAT(message({"--trace-config", "mode=triton", "--trace-endpoint=http://c/v1/traces"}),
              HasSubstr("is for trace mode opentelemetry"));
  EXPECT_THAT(message({"--trace-file=t", "--trace-endpoint=http://c/v1/traces"}), HasSubstr("choose one"));
  EXPECT_THAT(message({"--trace-endpoint=http://c/v1/traces", "--trace-level=TENSORS"}),
              HasSubstr("timestamps only"));
}

TEST(OptionsTest, HelpListsEveryFlag) {
  auto options = ParseServeOptions({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
  const std::string help = ServeHelpText();
  for (const char* flag : {"--model-repository", "--http-port", "--grpc-port", "--metrics-port",
                           "--log-verbose", "--exit-timeout-secs", "--http-max-input-size"}) {
    EXPECT_THAT(help, HasSubstr(flag));
  }
}

TEST(OptionsTest, GrpcFlags) {
  auto defaults = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->grpc_address, "0.0.0.0");
  EXPECT_EQ(defaults->grpc_port, 8001);
  EXPECT_EQ(defaults->grpc_max_message_bytes, 64u << 20);
  auto options = ParseServeOptions({"--model-repository=/m", "--grpc-address", "127.0.0.1",
                                    "--grpc-port=0", "--grpc-max-message-bytes", "4096"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->grpc_address, "127.0.0.1");
  EXPECT_EQ(options->grpc_port, 0);
  EXPECT_EQ(options->grpc_max_message_bytes, 4096u);
  // gRPC takes an int message limit.
  EXPECT_THAT(std::string(ParseServeOptions({"--model-repository=/m",
                                             "--grpc-max-message-bytes=4294967296"})
                              .status()
                              .message()),
              HasSubstr("--grpc-max-message-bytes"));
}

TEST(OptionsTest, GrpcInferThreads) {
  auto defaults = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->grpc_infer_threads, 0);  // the server then uses one per CPU
  auto options = ParseServeOptions({"--model-repository=/m", "--grpc-infer-threads", "3"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->grpc_infer_threads, 3);
  for (const char* bad : {"0", "-1", "two", "1.5", "", "1025"}) {
    absl::Status status = ParseServeOptions({"--model-repository=/m", StrCat("--grpc-infer-threads=", bad)}).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(status.message()), HasSubstr("--grpc-infer-threads")) << bad;
  }
}

TEST(OptionsTest, RestrictedApiFlags) {
  auto options = ParseServeOptions(
      {"--model-repository=/m", "--http-restricted-api=model-repository,logging:Admin-Key=s3",
       "--grpc-restricted-protocol", "model-repository:admin-key=s3"});
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->http_restricted_api,
            std::vector<std::string>{"model-repository,logging:Admin-Key=s3"});
  EXPECT_EQ(options->grpc_restricted_protocol, std::vector<std::string>{"model-repository:admin-key=s3"});
  auto message = [](std::vector<std::string> args) {
    return std::string(ParseServeOptions(args).status().message());
  };
  EXPECT_THAT(message({"--model-repository=/m", "--http-restricted-api=infer:k=v"}),
              HasSubstr("unknown restricted api 'infer'"));
  EXPECT_TRUE(ParseServeOptions({"--model-repository=/m", "--http-restricted-api=inference,health:k=v",
                                 "--grpc-restricted-protocol=model-config,statistics:k=v"})
                  .ok());
  EXPECT_THAT(message({"--model-repository=/m", "--http-restricted-api=logging"}),
              HasSubstr("--http-restricted-api"));
  EXPECT_THAT(message({"--model-repository=/m", "--grpc-restricted-protocol=logging:k=v",
                       "--grpc-restricted-protocol=logging,model-repository:k2=v"}),
              HasSubstr("more than one restricted group"));
}

TEST(OptionsTest, AdminApiIsClosedUntilAFlagOpensIt) {
  auto defaults = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->allow_admin_api.empty());
  auto opened = ParseServeOptions({"--model-repository=/m", "--allow-admin-api=logging,trace",
                                   "--allow-admin-api", "logging", "--allow-client-shm", "true"});
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->allow_admin_api, (std::vector<ApiCategory>{ApiCategory::kLogging, ApiCategory::kTrace,
                                                               ApiCategory::kSharedMemory}));
  auto closed_again = ParseServeOptions(
      {"--model-repository=/m", "--allow-admin-api=shared-memory", "--allow-client-shm=false"});
  ASSERT_TRUE(closed_again.ok());
  EXPECT_TRUE(closed_again->allow_admin_api.empty());
  auto message = [](std::vector<std::string> args) {
    return std::string(ParseServeOptions(args).status().message());
  };
  EXPECT_THAT(message({"--model-repository=/m", "--allow-admin-api=inference"}),
              HasSubstr("--allow-admin-api: 'inference' has no admin operations to open"));
  EXPECT_THAT(message({"--model-repository=/m", "--allow-admin-api="}), HasSubstr("--allow-admin-api"));
  EXPECT_THAT(message({"--model-repository=/m", "--allow-client-shm=yes"}),
              HasSubstr("--allow-client-shm: must be true or false"));
}

TEST(OptionsTest, CpuPlacementFlag) {
  auto defaults = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->cpu_placement, "none");
  auto pinned = ParseServeOptions({"--model-repository=/m", "--cpu-placement", "pinned"});
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->cpu_placement, "pinned");
  for (const char* bad : {"--cpu-placement=", "--cpu-placement=static", "--cpu-placement=PINNED",
                          "--cpu-placement=pinned,none"}) {
    const std::string message(ParseServeOptions({"--model-repository=/m", bad}).status().message());
    EXPECT_THAT(message, HasSubstr("--cpu-placement")) << bad;
    EXPECT_THAT(message, HasSubstr("none, pinned")) << bad;
  }
}

TEST(OptionsTest, CacheConfigIsTritonsLocalCache) {
  auto none = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->response_cache_bytes, 0u);
  auto both_forms = ParseServeOptions({"--model-repository=/m", "--cache-config", "local,size=1048576"});
  ASSERT_TRUE(both_forms.ok()) << both_forms.status();
  EXPECT_EQ(both_forms->response_cache_bytes, 1048576u);
  auto equals = ParseServeOptions({"--model-repository=/m", "--cache-config=local,size=4096"});
  ASSERT_TRUE(equals.ok()) << equals.status();
  EXPECT_EQ(equals->response_cache_bytes, 4096u);
  auto deprecated = ParseServeOptions({"--model-repository=/m", "--response-cache-byte-size=8192"});
  ASSERT_TRUE(deprecated.ok()) << deprecated.status();
  EXPECT_EQ(deprecated->response_cache_bytes, 8192u);
  const std::pair<const char*, const char*> bad[] = {
      {"--cache-config=redis,host=localhost", "cache 'redis' is not supported"},
      {"--cache-config=local", "expected local,size=BYTES"},
      {"--cache-config=local,bytes=10", "unknown setting 'bytes=10'"},
      {"--cache-config=local,size=-1", "size '-1' is not an integer"},
      {"--cache-config=local,size=10MB", "size '10MB' is not an integer"},
      {"--cache-config=local,size=", "size '' is not an integer"},
      {"--cache-config=local,size=99999999999999999999", "is not an integer"},
  };
  for (const auto& [flag, expected] : bad) {
    const absl::Status status = ParseServeOptions({"--model-repository=/m", flag}).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << flag;
    EXPECT_THAT(std::string(status.message()), HasSubstr("--cache-config: ")) << flag;
    EXPECT_THAT(std::string(status.message()), HasSubstr(expected)) << flag;
  }
}

TEST(OptionsTest, ModelLoadThreadCount) {
  auto parse = [](std::string value) {
    return ParseServeOptions({"--model-repository=/m", "--model-load-thread-count=" + value});
  };
  ASSERT_TRUE(parse("0").ok());
  EXPECT_EQ(LoadThreads(*parse("0"), 2), 2);    // one per usable CPU
  EXPECT_EQ(LoadThreads(*parse("0"), 64), 8);   // at most 8 by default
  EXPECT_EQ(LoadThreads(*parse("0"), 0), 1);
  EXPECT_EQ(LoadThreads(*parse("3"), 64), 3);   // as asked
  EXPECT_EQ(LoadThreads(*parse("16"), 2), 16);
  for (const char* bad : {"-1", "65", "two", "", "1.5"}) {
    auto parsed = parse(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("--model-load-thread-count")) << bad;
  }
}


// Writes an (empty) file the TLS flags can name: they are checked for readability at parse.
std::string TouchFile(const std::string& name) {
  std::string path = ::testing::TempDir() + "options_test_" + name;
  std::FILE* f = std::fopen(path.c_str(), "w");
  std::fclose(f);
  return path;
}

TEST(OptionsTest, TlsFlagsApplyToEveryPortUnlessTritonsGrpcFlagsAreGiven) {
  const std::string cert = TouchFile("cert.pem"), key = TouchFile("key.pem"), ca = TouchFile("ca.pem");
  absl::StatusOr<ServeOptions> o =
      ParseServeOptions({"--model-repository=/m", "--tls-cert-file", cert, "--tls-key-file=" + key,
                         "--tls-ca-file=" + ca, "--tls-client-auth=require"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_TRUE(o->tls.enabled());
  EXPECT_EQ(o->tls.client_auth, TlsClientAuth::kRequire);
  EXPECT_EQ(o->grpc_tls.cert_file, cert);
  EXPECT_EQ(o->grpc_tls.client_auth, TlsClientAuth::kRequire);

  o = ParseServeOptions({"--model-repository=/m", "--tls-cert-file", cert, "--tls-key-file=" + key,
                         "--grpc-use-ssl-mutual=true", "--grpc-server-cert=" + cert, "--grpc-server-key=" + key,
                         "--grpc-root-cert=" + ca});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->tls.client_auth, TlsClientAuth::kNone);
  EXPECT_EQ(o->grpc_tls.ca_file, ca);
  EXPECT_EQ(o->grpc_tls.client_auth, TlsClientAuth::kRequire);

  o = ParseServeOptions({"--model-repository=/m", "--grpc-use-ssl=true", "--grpc-server-cert=" + cert,
                         "--grpc-server-key=" + key});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_FALSE(o->tls.enabled());
  EXPECT_TRUE(o->grpc_tls.enabled());
  EXPECT_EQ(o->grpc_tls.client_auth, TlsClientAuth::kNone);
}

TEST(OptionsTest, TlsFlagErrorsNameTheFlag) {
  const std::string cert = TouchFile("cert.pem");
  auto message = [](std::vector<std::string> args) {
    args.insert(args.begin(), "--model-repository=/m");
    absl::StatusOr<ServeOptions> o = ParseServeOptions(args);
    return o.ok() ? std::string("ok") : std::string(o.status().message());
  };
  EXPECT_EQ(message({"--tls-cert-file=" + cert}), "--tls-cert-file needs --tls-key-file");
  EXPECT_EQ(message({"--tls-client-auth=sometimes"}),
            "--tls-client-auth: 'sometimes' is not one of none, optional, require");
  EXPECT_EQ(message({"--grpc-server-cert=" + cert}),
            "--grpc-server-cert / --grpc-server-key / --grpc-root-cert need --grpc-use-ssl=true");
  EXPECT_EQ(message({"--grpc-use-ssl=true"}), "--grpc-use-ssl needs --grpc-server-cert and --grpc-server-key");
  EXPECT_NE(message({"--tls-cert-file=/nonexistent/c.pem", "--tls-key-file=" + cert}).find("cannot open"),
            std::string::npos);
}

TEST(OptionsTest, TritonMetricsFlags) {
  auto defaults = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->triton_metrics);
  EXPECT_TRUE(defaults->metrics_counter_latencies);
  auto off = ParseServeOptions({"--model-repository=/m", "--triton-metrics=false", "--metrics-config",
                                "counter_latencies=false"});
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->triton_metrics);
  EXPECT_FALSE(off->metrics_counter_latencies);
  // Triton's other keys start the server (with a warning logged by Server::Start), their
  // values checked as Triton would.
  auto triton_keys = ParseServeOptions({"--model-repository=/m", "--metrics-config=summary_latencies=true",
                                        "--metrics-config", "summary_quantiles=0.5:0.05,0.99:0.001",
                                        "--metrics-config=histogram_latencies=false"});
  ASSERT_TRUE(triton_keys.ok()) << triton_keys.status();
  EXPECT_TRUE(triton_keys->metrics_summary_latencies);
  EXPECT_THAT(triton_keys->metrics_summary_quantiles,
              ::testing::ElementsAre(std::pair(0.5, 0.05), std::pair(0.99, 0.001)));
  EXPECT_THAT(triton_keys->metrics_config_ignored, ::testing::ElementsAre("histogram_latencies=false"));
  EXPECT_TRUE(triton_keys->metrics_counter_latencies);
  for (const char* bad : {"counter_latencies", "counter_latencies=", "counter_latencies=yes",
                          "summary_latencies=maybe", "summary_quantiles=", "summary_quantiles=0.5",
                          "summary_quantiles=0.5:2", "summary_quantiles=0.5:0.1,", "summary_quantiles=1:0.1",
                          "summary_quantiles=0.5:0", "summary_quantiles=nan:0.1", "nonsense=true",
                          "=true", ""}) {
    const std::string message(
        ParseServeOptions({"--model-repository=/m", std::string("--metrics-config=") + bad}).status().message());
    EXPECT_THAT(message, HasSubstr("--metrics-config")) << bad;
  }
  EXPECT_THAT(std::string(ParseServeOptions({"--model-repository=/m", "--triton-metrics=yes"}).status().message()),
              HasSubstr("--triton-metrics"));
}

TEST(OptionsTest, StrictReadinessIsTritonsBooleanFlag) {
  auto defaults = ParseServeOptions({"--model-repository=/m"});
  ASSERT_TRUE(defaults.ok());
  EXPECT_TRUE(defaults->strict_readiness);  // Triton's default: one failed model, not ready
  // Both forms, and every spelling Triton's boolean flags take.
  for (const auto& [args, expected] : std::vector<std::pair<std::vector<std::string>, bool>>{
           {{"--strict-readiness=false"}, false},
           {{"--strict-readiness", "false"}, false},
           {{"--strict-readiness=0"}, false},
           {{"--strict-readiness", "off"}, false},
           {{"--strict-readiness=FALSE"}, false},
           {{"--strict-readiness=true"}, true},
           {{"--strict-readiness", "1"}, true},
           {{"--strict-readiness=On"}, true},
           {{"--strict-readiness=false", "--strict-readiness=true"}, true},  // the last one wins
       }) {
    std::vector<std::string> all = {"--model-repository=/m"};
    all.insert(all.end(), args.begin(), args.end());
    auto options = ParseServeOptions(all);
    ASSERT_TRUE(options.ok()) << args[0] << ": " << options.status();
    EXPECT_EQ(options->strict_readiness, expected) << args[0] << (args.size() > 1 ? " " + args[1] : "");
  }
  auto message = [](std::vector<std::string> args) {
    args.insert(args.begin(), "--model-repository=/m");
    return std::string(ParseServeOptions(args).status().message());
  };
  EXPECT_EQ(message({"--strict-readiness=maybe"}),
            "--strict-readiness: must be true or false (or 1, 0, on, off), not 'maybe'");
  EXPECT_EQ(message({"--strict-readiness="}), "--strict-readiness: must be true or false (or 1, 0, on, off), not ''");
  EXPECT_EQ(message({"--strict-readiness"}), "--strict-readiness needs a value (true|false)");
  // The other boolean flags take the same spellings.
  auto shm = ParseServeOptions({"--model-repository=/m", "--allow-client-shm", "1"});
  ASSERT_TRUE(shm.ok()) << shm.status();
  EXPECT_EQ(shm->allow_admin_api, std::vector<ApiCategory>{ApiCategory::kSharedMemory});
  EXPECT_THAT(message({"--allow-client-shm=yes"}), HasSubstr("--allow-client-shm: must be true or false"));
}

// `infera serve` prints the message on one line, then "see 'infera serve --help'": the
// parser's message must be one line that names the problem, with no pointer of its own.
TEST(OptionsTest, ErrorsAreOneLine) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--bogus"},
           {"--model-repository=/m", "--bogus"},
           {"--model-repository=/m", "--http-port", "abc"},
           {"--model-repository=/m", "--http-port"},
           {"--model-repository=/m", "stray"},
           {"--model-repository=/m", "--model-control-mode=sometimes"},
           {"--model-repository=/m", "--strict-readiness=perhaps"},
           {},
       }) {
    const absl::Status status = ParseServeOptions(args).status();
    ASSERT_FALSE(status.ok());
    const std::string message(status.message());
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.find("--help"), std::string::npos) << message;
    EXPECT_LE(message.size() + std::string("infera serve: ").size(), kHelpColumns) << message;
  }
  EXPECT_EQ(std::string(ParseServeOptions({"--model-repository=/m", "--bogus"}).status().message()),
            "unknown flag --bogus");
  EXPECT_EQ(std::string(ParseServeOptions({"--model-repository=/m", "--http-port", "abc"}).status().message()),
            "--http-port: 'abc' is not an integer in [0, 65535]");
}

// Columns of a UTF-8 line: its code points (the help has no wide characters).
size_t Columns(std::string_view line) {
  size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

TEST(OptionsTest, HelpFitsAHundredColumnsAndSaysWhatIsServed) {
  const std::string help = ServeHelpText();
  size_t start = 0, lines = 0;
  while (start < help.size()) {
    const size_t end = help.find('\n', start);
    const std::string_view line = std::string_view(help).substr(start, end - start);
    EXPECT_LE(Columns(line), kHelpColumns) << line;
    start = end + 1;
    ++lines;
  }
  EXPECT_GT(lines, 60u);
  for (const char* served : {"KServe v2", "gRPC", "OpenAI", "/v1/chat/completions", "/v1/embeddings",
                             "/console", "--strict-readiness"}) {
    EXPECT_THAT(help, HasSubstr(served));
  }
  // Each flag's first line starts "  --NAME" (tests/deploy/deploy_checks.py reads them).
  EXPECT_THAT(help, HasSubstr("\n  --http-port N"));
  EXPECT_THAT(help, HasSubstr("\n  --strict-readiness true|false"));
}

}  // namespace
}  // namespace infera
