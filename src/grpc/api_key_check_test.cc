#include "grpc/api_key_check.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(GrpcKeyAccessTest, EveryRpcNeedsItsRightAndModel) {
  EXPECT_TRUE(GrpcKeyAccessFor(inference::ServerLiveRequest()).open);
  EXPECT_TRUE(GrpcKeyAccessFor(inference::ServerReadyRequest()).open);
  inference::ModelReadyRequest ready;
  ready.set_name("resnet");
  EXPECT_FALSE(GrpcKeyAccessFor(ready).open);
  EXPECT_EQ(GrpcKeyAccessFor(ready).right, kRightRead);
  EXPECT_EQ(GrpcKeyAccessFor(ready).model, "resnet");
  inference::ModelStatisticsRequest all_stats;
  EXPECT_TRUE(GrpcKeyAccessFor(all_stats).every_model);
  all_stats.set_name("m");
  EXPECT_FALSE(GrpcKeyAccessFor(all_stats).every_model);
  inference::ModelInferRequest infer;
  infer.set_model_name("llm");
  EXPECT_EQ(GrpcKeyAccessFor(infer).right, kRightInfer);
  EXPECT_EQ(GrpcKeyAccessFor(infer).model, "llm");
  inference::RepositoryModelLoadRequest load;
  load.set_model_name("m");
  EXPECT_EQ(GrpcKeyAccessFor(load).right, kRightAdmin);
  EXPECT_EQ(GrpcKeyAccessFor(load).model, "m");
  EXPECT_EQ(GrpcKeyAccessFor(inference::RepositoryModelUnloadRequest()).right, kRightAdmin);
  EXPECT_EQ(GrpcKeyAccessFor(inference::LogSettingsRequest()).right, kRightAdmin);
  inference::TraceSettingRequest trace;
  EXPECT_EQ(GrpcKeyAccessFor(trace).right, kRightRead);
  (*trace.mutable_settings())["trace_rate"].add_value("1");
  EXPECT_EQ(GrpcKeyAccessFor(trace).right, kRightAdmin);
  EXPECT_EQ(GrpcKeyAccessFor(inference::SystemSharedMemoryStatusRequest()).right, kRightRead);
  EXPECT_EQ(GrpcKeyAccessFor(inference::SystemSharedMemoryRegisterRequest()).right, kRightAdmin);
  EXPECT_EQ(GrpcKeyAccessFor(inference::SystemSharedMemoryUnregisterRequest()).right, kRightAdmin);
  EXPECT_EQ(GrpcKeyAccessFor(inference::CudaSharedMemoryRegisterRequest()).right, kRightAdmin);
  EXPECT_EQ(GrpcKeyAccessFor(inference::RepositoryIndexRequest()).right, kRightRead);
  EXPECT_EQ(GrpcKeyAccessFor(inference::ServerMetadataRequest()).right, kRightRead);
}

TEST(GrpcKeyAccessTest, NoStoreAdmitsWithoutAGrant) {
  grpc::ServerContext context;
  absl::StatusOr<ApiKeyGrantPtr> grant = AuthorizeGrpcCall(nullptr, context, inference::ModelInferRequest());
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ(*grant, nullptr);
}

}  // namespace
}  // namespace infera
