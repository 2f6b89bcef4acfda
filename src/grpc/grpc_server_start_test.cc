// GrpcServer::Start's refusals of options it cannot serve with (the server is never
// started: no socket, no client).
#include <unistd.h>

#include <filesystem>
#include <string>
#include <utility>

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

// GrpcServer::Start's answer for `options` over an empty repository.
absl::Status StartStatus(const GrpcServer::Options& options) {
  BackendRegistry registry;
  const auto root = fs::temp_directory_path() / StrCat("infera_grpc_start_test_", ::getpid());
  fs::create_directories(root);
  ModelManager::Options manager_options;
  manager_options.repository = root;
  manager_options.backends = &registry;
  auto manager = ModelManager::Create(std::move(manager_options));
  EXPECT_TRUE(manager.ok()) << manager.status();
  absl::Status status = manager.ok() ? GrpcServer::Start(options, **manager).status() : manager.status();
  fs::remove_all(root);
  return status;
}

TEST(GrpcServerStartTest, RejectsFewerThanOneInferThread) {
  GrpcServer::Options options;
  options.infer_threads = 0;
  const absl::Status status = StartStatus(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("--grpc-infer-threads"));
}

TEST(GrpcServerStartTest, RejectsAMessageLimitGrpcCannotTake) {
  GrpcServer::Options options;
  options.max_message_bytes = 1ull << 33;
  EXPECT_EQ(StartStatus(options).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace infera
