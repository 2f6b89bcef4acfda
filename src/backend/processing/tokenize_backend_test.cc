#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/processing/processing_backends.h"
#include "common/status.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "text/test_tokenizers.h"

namespace infera {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig config;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &config));
  return config;
}

constexpr char kBatched[] = R"(
  name: "tok" backend: "tokenize" max_batch_size: 4
  input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
  output [ { name: "input_ids" data_type: TYPE_INT64 dims: [ 6 ] },
           { name: "attention_mask" data_type: TYPE_INT64 dims: [ 6 ] },
           { name: "token_type_ids" data_type: TYPE_INT64 dims: [ 6 ] } ]
  parameters { key: "max_length" value { string_value: "6" } })";

class TokenizeBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("tokenize_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(dir_ / "1");
    std::ofstream(dir_ / "1" / "tokenizer.json") << text::testing::BertTokenizerJson();
    std::ofstream(dir_ / "1" / "gpt2.json")
        << text::testing::ByteLevelTokenizerJson(text::testing::kGpt2PreTokenizer);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const inference::ModelConfig& config) {
    RETURN_IF_ERROR(backend_->ValidateConfig(config));
    ModelLoadContext context{&config, 1, dir_, dir_ / "1"};
    return backend_->Load(context);
  }

  static Tensor Texts(std::vector<std::string> texts, bool batched) {
    std::string bytes;
    for (const auto& t : texts) AppendBytesElement(bytes, t);
    Tensor t;
    t.name = "TEXT";
    t.dtype = DataType::kBytes;
    t.shape = batched ? Shape{static_cast<int64_t>(texts.size()), 1} : Shape{1};
    t.data = Buffer::FromString(std::move(bytes));
    return t;
  }

  static std::vector<int64_t> Values(const Tensor& t) {
    std::vector<int64_t> v(t.data.size() / sizeof(int64_t));
    std::memcpy(v.data(), t.data.data(), t.data.size());
    return v;
  }

  std::unique_ptr<Backend> backend_ = CreateTokenizeBackend();
  std::filesystem::path dir_;
};

TEST_F(TokenizeBackendTest, BatchOfTextsPaddedAndTruncated) {
  EXPECT_EQ(backend_->name(), "tokenize");
  EXPECT_FALSE(backend_->RunsInline());
  EXPECT_FALSE(backend_->UsesIntraOpThreads());
  inference::ModelConfig config = Config(kBatched);
  auto model = Load(config);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance({});
  ASSERT_TRUE(instance.ok());
  std::vector<Tensor> in;
  in.push_back(Texts({"Hello, world!", "", "hello hello hello hello hello"}, true));
  auto out = (*instance)->Execute(std::move(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 3u);
  EXPECT_EQ((*out)[0].name, "input_ids");
  EXPECT_EQ((*out)[0].dtype, DataType::kInt64);
  EXPECT_THAT((*out)[0].shape, ElementsAre(3, 6));
  EXPECT_THAT(Values((*out)[0]), ElementsAreArray({2, 17, 10, 18, 11, 3,  //
                                                   2, 3, 0, 0, 0, 0,      //
                                                   2, 17, 17, 17, 17, 3}));
  EXPECT_EQ((*out)[1].name, "attention_mask");
  EXPECT_THAT(Values((*out)[1]), ElementsAreArray({1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ((*out)[2].name, "token_type_ids");
  EXPECT_THAT(Values((*out)[2]), ElementsAreArray(std::vector<int64_t>(18, 0)));
}

TEST_F(TokenizeBackendTest, UnbatchedBpeWithoutSpecialTokensAndOneOutput) {
  inference::ModelConfig config = Config(R"(
    name: "tok" backend: "tokenize"
    input [ { name: "T" data_type: TYPE_STRING dims: [ 1 ] } ]
    output [ { name: "input_ids" data_type: TYPE_INT64 dims: [ 4 ] } ]
    parameters { key: "max_length" value { string_value: "4" } }
    parameters { key: "tokenizer" value { string_value: "gpt2.json" } }
    parameters { key: "add_special_tokens" value { string_value: "false" } })");
  auto model = Load(config);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance({});
  std::vector<Tensor> in;
  in.push_back(Texts({"a the"}, false));
  auto out = (*instance)->Execute(std::move(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_THAT((*out)[0].shape, ElementsAre(4));
  // "a" = byte 'a', " the" = 258; no [PAD] and no padding.pad_id: pad 0.
  EXPECT_THAT(Values((*out)[0]), ElementsAre('a', 258, 0, 0));
}

TEST_F(TokenizeBackendTest, Int32OutputsForEncodersThatTakeThem) {
  inference::ModelConfig config = Config(R"(
    name: "tok" backend: "tokenize" max_batch_size: 2
    input [ { name: "T" data_type: TYPE_STRING dims: [ 1 ] } ]
    output [ { name: "attention_mask" data_type: TYPE_INT64 dims: [ 5 ] },
             { name: "input_ids" data_type: TYPE_INT32 dims: [ 5 ] } ]
    parameters { key: "max_length" value { string_value: "5" } })");
  auto model = Load(config);
  ASSERT_TRUE(model.ok()) << model.status();
  auto instance = (*model)->CreateInstance({});
  std::vector<Tensor> in;
  in.push_back(Texts({"hello world", "cafe"}, true));
  auto out = (*instance)->Execute(std::move(in));
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[0].name, "attention_mask");
  EXPECT_THAT(Values((*out)[0]), ElementsAre(1, 1, 1, 1, 0, 1, 1, 1, 0, 0));
  EXPECT_EQ((*out)[1].name, "input_ids");
  EXPECT_EQ((*out)[1].dtype, DataType::kInt32);
  std::vector<int32_t> ids(10);
  ASSERT_EQ((*out)[1].data.size(), ids.size() * sizeof(int32_t));
  std::memcpy(ids.data(), (*out)[1].data.data(), (*out)[1].data.size());
  EXPECT_THAT(ids, ElementsAre(2, 17, 18, 3, 0, 2, 9, 3, 0, 0));
}

TEST_F(TokenizeBackendTest, InvalidUtf8IsAClientErrorNamingTheElement) {
  inference::ModelConfig config = Config(kBatched);
  auto model = Load(config);
  ASSERT_TRUE(model.ok());
  auto instance = (*model)->CreateInstance({});
  std::vector<Tensor> in;
  in.push_back(Texts({"ok", "bad \xC3\x28"}, true));
  auto out = (*instance)->Execute(std::move(in));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(out.status().message()), HasSubstr("element 1 is not valid UTF-8"));
}

TEST_F(TokenizeBackendTest, ConfigErrorsNameTheParameterOrTensor) {
  auto error = [&](const std::string& text) {
    inference::ModelConfig config = Config(text);
    auto model = Load(config);
    return model.ok() ? std::string("loaded") : std::string(model.status().message());
  };
  const std::string in = R"(name: "t" backend: "tokenize" input [ { name: "T" data_type: TYPE_STRING dims: [ 1 ] } ] )";
  const std::string out6 = R"(output [ { name: "input_ids" data_type: TYPE_INT64 dims: [ 6 ] } ] )";
  const std::string len6 = R"(parameters { key: "max_length" value { string_value: "6" } } )";
  EXPECT_EQ(error(in + out6 + len6), "loaded");
  EXPECT_THAT(error(in + out6), HasSubstr("parameters[max_length] is required"));
  EXPECT_THAT(error(in + out6 + R"(parameters { key: "max_length" value { string_value: "6x" } })"),
              HasSubstr("parameters[max_length] '6x'"));
  EXPECT_THAT(error(in + out6 + R"(parameters { key: "max_length" value { string_value: "5" } })"),
              HasSubstr("output 'input_ids' must be TYPE_INT64 or TYPE_INT32 with dims [max_length] = [5]"));
  EXPECT_THAT(error(in + R"(output [ { name: "ids" data_type: TYPE_INT64 dims: [ 6 ] } ] )" + len6),
              HasSubstr("output 'ids' is not one of"));
  EXPECT_THAT(error(in + R"(output [ { name: "input_ids" data_type: TYPE_FP32 dims: [ 6 ] } ] )" + len6),
              HasSubstr("must be TYPE_INT64 or TYPE_INT32"));
  EXPECT_THAT(error(R"(name: "t" backend: "tokenize" input [ { name: "T" data_type: TYPE_FP32 dims: [ 1 ] } ] )" +
                    out6 + len6),
              HasSubstr("TYPE_STRING and dims [1]"));
  EXPECT_THAT(error(in + out6 + len6 + R"(parameters { key: "tokenizer" value { string_value: "../../etc/passwd" } })"),
              HasSubstr("inside the version directory"));
  EXPECT_THAT(error(in + out6 + len6 + R"(parameters { key: "tokenizer" value { string_value: "/etc/passwd" } })"),
              HasSubstr("inside the version directory"));
  EXPECT_THAT(error(in + out6 + len6 + R"(parameters { key: "tokenizer" value { string_value: "missing.json" } })"),
              HasSubstr("missing.json"));
  EXPECT_THAT(error(in + out6 + len6 + R"(parameters { key: "add_special_tokens" value { string_value: "yes" } })"),
              HasSubstr("parameters[add_special_tokens] 'yes'"));
  EXPECT_THAT(error(in + R"(output [ { name: "input_ids" data_type: TYPE_INT64 dims: [ 2 ] } ] )" +
                    R"(parameters { key: "max_length" value { string_value: "2" } })"),
              HasSubstr("leaves no room for text after the 2 special tokens"));
  std::ofstream(dir_ / "1" / "bad.json") << R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})";
  EXPECT_THAT(error(in + out6 + len6 + R"(parameters { key: "tokenizer" value { string_value: "bad.json" } })"),
              HasSubstr("unk_token '[UNK]' is not in the vocab"));
}

}  // namespace
}  // namespace infera
