#include "scheduling/sequence_options.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "scheduling/sequence_request.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config)) << text;
  return config;
}

std::string WithControls(const std::string& controls, const std::string& extra = "") {
  return "name: 'm' max_batch_size: 4 input { name: 'INPUT' data_type: TYPE_INT32 dims: [1] } "
         "sequence_batching { " + extra + " control_input [" + controls + "] }";
}

TEST(SequenceOptionsTest, ReadsTritonFields) {
  auto options = SequenceBatchingOptionsFromConfig(
      Config(WithControls(R"pb(
        { name: "START" control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } ] },
        { name: "READY" control [ { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } ] },
        { name: "END" control [ { kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] } ] },
        { name: "CORRID" control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } ] })pb",
                          "max_sequence_idle_microseconds: 5000")),
      33);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->strategy, SequenceBatchingOptions::Strategy::kDirect);
  EXPECT_EQ(options->slots_per_instance, 4);
  EXPECT_TRUE(options->batched);
  EXPECT_EQ(options->max_idle.count(), 5000);
  EXPECT_EQ(options->max_backlog_requests, 33u);
  ASSERT_EQ(options->controls.size(), 4u);
  EXPECT_EQ(options->controls[0].dtype, DataType::kInt32);
  EXPECT_EQ(options->controls[1].dtype, DataType::kBool);
  EXPECT_EQ(options->controls[2].dtype, DataType::kFp32);
  EXPECT_EQ(options->controls[3].kind, SequenceControl::Kind::kCorrelationId);
  EXPECT_EQ(options->correlation_id_dtype, DataType::kUint64);
}

TEST(SequenceOptionsTest, DefaultIdleIsOneSecondAndOldestSetsSlots) {
  auto options = SequenceBatchingOptionsFromConfig(
      Config("name: 'm' max_batch_size: 8 sequence_batching { oldest { max_candidate_sequences: 3 "
             "preferred_batch_size: [2] } }"),
      10);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->max_idle.count(), 1'000'000);
  EXPECT_EQ(options->strategy, SequenceBatchingOptions::Strategy::kOldest);
  EXPECT_EQ(options->slots_per_instance, 3);
  EXPECT_EQ(options->max_batch_rows, 8);
}

TEST(SequenceOptionsTest, RefusesMalformedControlsNamingTheField) {
  struct Case {
    std::string config;
    std::string error;
  };
  const std::vector<Case> cases = {
      {WithControls("{ name: 'S' control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [0] } ] }"),
       "control_input[0]: CONTROL_SEQUENCE_START needs 2 values"},
      {WithControls("{ name: 'S' control [ { kind: CONTROL_SEQUENCE_START } ] }"), "needs exactly one of"},
      {WithControls("{ name: 'S' control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] "
                    "fp32_false_true: [0, 1] } ] }"),
       "needs exactly one of"},
      {WithControls("{ name: 'INPUT' control [ { kind: CONTROL_SEQUENCE_START int32_false_true: [0, 1] } ] }"),
       "'INPUT' is also a config input"},
      {WithControls("{ name: 'A' control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] } ] },"
                    "{ name: 'A' control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1] } ] }"),
       "'A' is named twice"},
      {WithControls("{ name: 'A' control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] } ] },"
                    "{ name: 'B' control [ { kind: CONTROL_SEQUENCE_READY int32_false_true: [0, 1] } ] }"),
       "control_input[1]: CONTROL_SEQUENCE_READY is given twice"},
      {WithControls("{ name: 'C' control [ { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_FP32 } ] }"),
       "CONTROL_SEQUENCE_CORRID data_type must be"},
      {WithControls("{ name: 'C' control [ { kind: CONTROL_SEQUENCE_CORRID int32_false_true: [0, 1] } ] }"),
       "takes data_type"},
      {WithControls("{ name: '' control [ { kind: CONTROL_SEQUENCE_END int32_false_true: [0, 1] } ] }"),
       "name must be 1 to 256"},
      {WithControls("{ name: 'E' }"), "needs exactly one control"},
      {"name: 'm' max_batch_size: 2 sequence_batching { oldest { max_candidate_sequences: 0 } }",
       "oldest.max_candidate_sequences: 0 must be"},
      {"name: 'm' max_batch_size: 2 sequence_batching { oldest { max_candidate_sequences: 2 "
       "preferred_batch_size: [3] } }",
       "oldest.preferred_batch_size[0]: 3 must be 1 to max_batch_size (2)"},
      {"name: 'm' sequence_batching { max_sequence_idle_microseconds: 999999999999999 }",
       "max_sequence_idle_microseconds: 999999999999999 is more than the limit"},
      {"name: 'm' model_transaction_policy { decoupled: true } sequence_batching { }", "decoupled"},
  };
  for (const Case& c : cases) {
    auto options = SequenceBatchingOptionsFromConfig(Config(c.config), 10);
    ASSERT_FALSE(options.ok()) << c.config;
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(options.status().message(), HasSubstr(c.error)) << c.config;
  }
}

TEST(SequenceRequestTest, ReadsIdsAndFlags) {
  auto numeric = ParseSequenceRequest({{"sequence_id", int64_t{42}}, {"sequence_start", true}}, "m");
  ASSERT_TRUE(numeric.ok());
  EXPECT_EQ(std::get<uint64_t>(numeric->id), 42u);
  EXPECT_TRUE(numeric->start);
  EXPECT_FALSE(numeric->end);
  auto text = ParseSequenceRequest({{"sequence_id", std::string("abc")}, {"sequence_end", true}}, "m");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(std::get<std::string>(text->id), "abc");
  EXPECT_TRUE(text->end);
  EXPECT_EQ(SequenceIdToString(text->id), "abc");
}

TEST(SequenceRequestTest, RefusesMissingOrMalformedParametersWithTritonsText) {
  const std::string missing = "inference request to model 'm' must specify a non-zero or non-empty correlation ID";
  EXPECT_EQ(ParseSequenceRequest({}, "m").status().message(), missing);
  EXPECT_EQ(ParseSequenceRequest({{"sequence_id", int64_t{0}}}, "m").status().message(), missing);
  EXPECT_EQ(ParseSequenceRequest({{"sequence_id", std::string()}}, "m").status().message(), missing);
  EXPECT_THAT(ParseSequenceRequest({{"sequence_id", int64_t{-3}}}, "m").status().message(),
              HasSubstr("must be an unsigned integer or a string"));
  EXPECT_THAT(ParseSequenceRequest({{"sequence_id", 1.5}}, "m").status().message(),
              HasSubstr("must be an unsigned integer or a string"));
  EXPECT_THAT(ParseSequenceRequest({{"sequence_id", std::string(2000, 'x')}}, "m").status().message(),
              HasSubstr("longer than 1024"));
  EXPECT_THAT(ParseSequenceRequest({{"sequence_id", int64_t{1}}, {"sequence_start", int64_t{1}}}, "m")
                  .status()
                  .message(),
              HasSubstr("parameter 'sequence_start' must be a bool"));
}

}  // namespace
}  // namespace infera
