#include "grpc/admin_audit.h"

#include "gtest/gtest.h"

namespace infera {
namespace {

TEST(AdminAuditTest, PeerUriBecomesIpPort) {
  EXPECT_EQ(GrpcPeerAddress("ipv4:127.0.0.1:50051"), "127.0.0.1:50051");
  EXPECT_EQ(GrpcPeerAddress("ipv6:[::1]:50051"), "[::1]:50051");
  EXPECT_EQ(GrpcPeerAddress("ipv6:%5B::1%5D:50051"), "[::1]:50051");
  EXPECT_EQ(GrpcPeerAddress("unix:/tmp/socket"), "unix:/tmp/socket");
  EXPECT_EQ(GrpcPeerAddress(""), "");
}

}  // namespace
}  // namespace infera
