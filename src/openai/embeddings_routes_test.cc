// EmbeddingsRoutes over a real socket, on a fake embedding model and a real tokenize step.
#include "openai/embeddings_routes.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "backend/backend_registry.h"
#include "backend/processing/processing_backends.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "text/test_tokenizers.h"

namespace infera::openai {
namespace {

using ::testing::HasSubstr;

// A fake embedding model: text -> [bytes, first byte, rows in the batch, -0.5].
class FakeEmbedInstance : public ModelInstance {
 public:
  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    auto texts = SplitBytesElements(inputs[0].data.AsStringView());
    if (!texts.ok()) return texts.status();
    uint8_t* data;
    Tensor out{"EMBEDDING", DataType::kFp32, {static_cast<int64_t>(texts->size()), 4},
               Buffer::Allocate(texts->size() * 4 * sizeof(float), &data)};
    float* f = reinterpret_cast<float*>(data);
    for (size_t i = 0; i < texts->size(); ++i) {
      const std::string_view t = (*texts)[i];
      f[i * 4 + 0] = static_cast<float>(t.size());
      f[i * 4 + 1] = t.empty() ? 0.0f : static_cast<float>(static_cast<uint8_t>(t[0]));
      f[i * 4 + 2] = static_cast<float>(texts->size());
      f[i * 4 + 3] = -0.5f;
    }
    std::vector<Tensor> outputs;
    outputs.push_back(std::move(out));
    return outputs;
  }
};

class FakeEmbedModel : public LoadedModel {
 public:
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<FakeEmbedInstance>();
  }
};

class FakeEmbedBackend : public Backend {
 public:
  std::string_view name() const override { return "fake_embed"; }
  absl::Status ValidateConfig(const inference::ModelConfig&) const override { return absl::OkStatus(); }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext&) override {
    return std::make_unique<FakeEmbedModel>();
  }
};

std::string HttpPost(uint16_t port, const std::string& path, const std::string& body) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  const std::string request = "POST " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) out.append(buf, n);
  close(fd);
  return out;
}

class EmbeddingsRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::path(::testing::TempDir()) / "embeddings_routes_test";
    std::filesystem::remove_all(root_);
    Write("embed", R"(name: "embed" backend: "fake_embed" max_batch_size: 2
        input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
        output [ { name: "EMBEDDING" data_type: TYPE_FP32 dims: [ 4 ] } ]
        parameters { key: "openai_embedding_tokenizer" value { string_value: "tok" } })");
    Write("tok", R"(name: "tok" backend: "tokenize" max_batch_size: 8
        input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
        output [ { name: "input_ids" data_type: TYPE_INT64 dims: [ 4 ] } ]
        parameters { key: "max_length" value { string_value: "4" } })");
    std::ofstream(root_ / "tok" / "1" / "tokenizer.json") << text::testing::BertTokenizerJson();
    registry_.Register(std::make_unique<FakeEmbedBackend>());
    registry_.Register(CreateTokenizeBackend());
    ModelManager::Options options;
    options.repository = root_;
    options.backends = &registry_;
    auto manager = ModelManager::Create(options);
    ASSERT_TRUE(manager.ok()) << manager.status();
    manager_ = std::move(*manager);
    manager_->LoadAll();
    routes_ = std::make_unique<EmbeddingsRoutes>(*manager_, InferTrace::Sink{});
    auto server = HttpServer::Start({"127.0.0.1", 0, 2}, [this](HttpRequest request, HttpResponder responder) {
      routes_->Handle(std::move(request), std::move(responder));
    });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }
  void TearDown() override {
    // The server's own shutdown order (server.cc): drain the models while the transport
    // still writes, then stop it. The last KServe request's callback may still be inside
    // HttpResponder::Send (the client already has the answer) holding the session; the
    // drain waits for it, so the session never outlives the HttpServer's io_context.
    manager_->UnloadAll(absl::Now() + absl::Seconds(30));
    server_.reset();
    routes_.reset();
    manager_.reset();
    std::filesystem::remove_all(root_);
  }
  void Write(const std::string& name, const std::string& config) {
    std::filesystem::create_directories(root_ / name / "1");
    std::ofstream(root_ / name / "config.pbtxt") << config;
  }
  // (status line, JSON body).
  std::pair<std::string, std::string> Post(const std::string& body) {
    const std::string response = HttpPost(server_->port(), "/v1/embeddings", body);
    const size_t head_end = response.find("\r\n\r\n");
    return {response.substr(0, response.find("\r\n")),
            head_end == std::string::npos ? "" : response.substr(head_end + 4)};
  }

  std::filesystem::path root_;
  BackendRegistry registry_;
  std::unique_ptr<ModelManager> manager_;
  std::unique_ptr<EmbeddingsRoutes> routes_;
  std::unique_ptr<HttpServer> server_;
};

TEST_F(EmbeddingsRoutesTest, InputsAreBatchedInOrderWithUsageFromTheTokenizeStep) {
  auto [status, body] = Post(R"({"model": "embed", "input": ["hello world", "", "a", "Zed", "hello"]})");
  ASSERT_THAT(status, HasSubstr("200")) << body;
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  ASSERT_TRUE(doc.IsObject()) << body;
  EXPECT_STREQ(doc["object"].GetString(), "list");
  EXPECT_STREQ(doc["model"].GetString(), "embed");
  const auto& data = doc["data"];
  ASSERT_EQ(data.Size(), 5u);
  const char* texts[] = {"hello world", "", "a", "Zed", "hello"};
  for (rapidjson::SizeType i = 0; i < 5; ++i) {
    EXPECT_STREQ(data[i]["object"].GetString(), "embedding");
    EXPECT_EQ(data[i]["index"].GetInt(), static_cast<int>(i));
    const auto& e = data[i]["embedding"];
    ASSERT_EQ(e.Size(), 4u);
    EXPECT_EQ(e[0].GetDouble(), std::strlen(texts[i])) << i;
    EXPECT_EQ(e[1].GetDouble(), texts[i][0] ? static_cast<uint8_t>(texts[i][0]) : 0) << i;
    EXPECT_LE(e[2].GetDouble(), 2.0);  // requests of max_batch_size texts at most
    EXPECT_EQ(e[3].GetDouble(), -0.5);
  }
  // BERT tokens, max_length 4: [CLS] hello world [SEP] = 4, [CLS] [SEP] = 2, "a" 3,
  // "zed" ([UNK]) 3, "hello" 3.
  EXPECT_EQ(doc["usage"]["prompt_tokens"].GetInt(), 15);
  EXPECT_EQ(doc["usage"]["total_tokens"].GetInt(), 15);
}

TEST_F(EmbeddingsRoutesTest, Base64AndDimensions) {
  auto [status, body] = Post(R"({"model": "embed", "input": "ab", "encoding_format": "base64", "dimensions": 4})");
  ASSERT_THAT(status, HasSubstr("200")) << body;
  rapidjson::Document doc;
  doc.Parse(body.c_str());
  // [2, 97, 1, -0.5] as little-endian float32, base64.
  EXPECT_STREQ(doc["data"][0]["embedding"].GetString(), "AAAAQAAAwkIAAIA/AAAAvw==");
  std::tie(status, body) = Post(R"({"model": "embed", "input": "ab", "dimensions": 3})");
  EXPECT_THAT(status, HasSubstr("400"));
  EXPECT_THAT(body, HasSubstr("'dimensions' 3 is not supported: model `embed` has 4 dimensions"));
  std::tie(status, body) = Post(R"({"model": "tok", "input": "ab"})");
  EXPECT_THAT(status, HasSubstr("404"));
  EXPECT_THAT(body, HasSubstr("is not an embedding model"));
  std::tie(status, body) = Post(R"({"model": "missing", "input": "ab"})");
  EXPECT_THAT(status, HasSubstr("404"));
}

}  // namespace
}  // namespace infera::openai
