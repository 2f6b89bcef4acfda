// GrpcServer::Start's refusals of options it cannot serve with (the server is never
// started: no socket, no client).
#include <unistd.h>

#include <filesystem>
#include <string>

#include "backend/backend_registry.h"
#include "common/str_cat.h"
#include "gmock/gmock.h"
#include "grpc/grpc_server.h"
#include "gtest/gtest.h"
#include "manager/model_manager.h"

namespace infera {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(GrpcServerStartTest, RejectsFewerThanOneInferThread) {
  GrpcServer::Options options;
  options.infer_threads = 0;
  BackendRegistry registry;
  auto root = fs::temp_directory_path() / StrCat("infera_grpc_threads_test_", ::getpid());
  fs::create_directories(root);
  ModelManager::Options manager_options;
  manager_options.repository = root;
  manager_options.backends = &registry;
  auto manager = ModelManager::Create(std::move(manager_options));
  ASSERT_TRUE(manager.ok());
  absl::Status status = GrpcServer::Start(options, **manager).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("--grpc-infer-threads"));
  fs::remove_all(root);
}

TEST(GrpcServerStartTest, RejectsAMessageLimitGrpcCannotTake) {
  GrpcServer::Options options;
  options.max_message_bytes = 1ull << 33;
  BackendRegistry registry;
  auto root = fs::temp_directory_path() / StrCat("infera_grpc_start_test_", ::getpid());
  fs::create_directories(root);
  ModelManager::Options manager_options;
  manager_options.repository = root;
  manager_options.backends = &registry;
  auto manager = ModelManager::Create(std::move(manager_options));
  ASSERT_TRUE(manager.ok());
  EXPECT_EQ(GrpcServer::Start(options, **manager).status().code(),
            absl::StatusCode::kInvalidArgument);
  fs::remove_all(root);
}

}  // namespace
}  // namespace infera
