#include "backend/backend_registry.h"

#include "backend/builtin/builtin_backends.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

class BackendRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.Register(CreateAddSubBackend(), {"add_sub_platform"});
    registry_.Register(CreateIdentityBackend());
  }
  BackendRegistry registry_;
};

TEST_F(BackendRegistryTest, FindsByBackendOrPlatform) {
  inference::ModelConfig config;
  config.set_backend("identity");
  EXPECT_EQ((*registry_.Find(config))->name(), "identity");
  config.clear_backend();
  config.set_platform("add_sub_platform");
  EXPECT_EQ((*registry_.Find(config))->name(), "add_sub");
  config.set_backend("add_sub");
  EXPECT_EQ((*registry_.Find(config))->name(), "add_sub");
}

TEST_F(BackendRegistryTest, ErrorsNameTheFieldAndChoices) {
  inference::ModelConfig config;
  auto none = registry_.Find(config);
  EXPECT_THAT(std::string(none.status().message()), HasSubstr("neither 'backend' nor 'platform'"));
  config.set_backend("onnxruntime");
  auto unknown = registry_.Find(config);
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("backend: unknown backend 'onnxruntime' (available: add_sub, identity)"));
  config.set_backend("identity");
  config.set_platform("add_sub_platform");
  EXPECT_THAT(std::string(registry_.Find(config).status().message()),
              HasSubstr("different runtimes"));
  config.clear_backend();
  config.set_platform("tensorrt_plan");
  EXPECT_THAT(std::string(registry_.Find(config).status().message()),
              HasSubstr("platform: unknown platform 'tensorrt_plan'"));
}

}  // namespace
}  // namespace infera
