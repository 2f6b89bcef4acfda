#include "http/shared_memory_routes.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "shm/shm_test_util.h"

namespace infera {
namespace {

using ::testing::HasSubstr;

HttpRequest Request(std::string method, std::string target, std::string body = "",
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
  HttpRequest request;
  request.method = std::move(method);
  request.target = std::move(target);
  request.body = std::move(body);
  request.headers = std::move(headers);
  return request;
}

// A server started with --allow-client-shm=true (open: true) or with neither that nor a
// credential (open: false, the default: registration closed).
AdminGuard Guard(std::string token = "", bool open = true) {
  AdminGuard::Options options;
  options.admin_token = std::move(token);
  if (open) options.opened.push_back(ApiCategory::kSharedMemory);
  return *AdminGuard::Create(std::move(options));
}

TEST(SharedMemoryRoutesTest, Matches) {
  EXPECT_TRUE(SharedMemoryRoutes::Matches("/v2/systemsharedmemory/status"));
  EXPECT_TRUE(SharedMemoryRoutes::Matches("/v2/cudasharedmemory/region/x/register"));
  EXPECT_FALSE(SharedMemoryRoutes::Matches("/v2/models/x/infer"));
  EXPECT_FALSE(SharedMemoryRoutes::Matches("/v2"));
}

TEST(SharedMemoryRoutesTest, RegisterStatusUnregister) {
  TestShmObject object(1024);
  SharedMemoryRegistry registry;
  SharedMemoryRoutes routes(registry, Guard());
  const std::string body = "{\"key\":\"" + object.key() + "\",\"offset\":8,\"byte_size\":64}";
  HttpResponse reg = routes.Handle(Request("POST", "/v2/systemsharedmemory/region/in0/register", body));
  ASSERT_EQ(reg.status, 200) << reg.body;
  HttpResponse status = routes.Handle(Request("GET", "/v2/systemsharedmemory/status"));
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(status.body, "[{\"name\":\"in0\",\"key\":\"" + object.key() +
                             "\",\"offset\":8,\"byte_size\":64}]");
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/in0/status")).status, 200);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/systemsharedmemory/region/nope/status")).status, 404);
  // Duplicate name.
  HttpResponse dup = routes.Handle(Request("POST", "/v2/systemsharedmemory/region/in0/register", body));
  EXPECT_EQ(dup.status, 409);
  EXPECT_THAT(dup.body, HasSubstr("already in manager"));
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/in0/unregister")).status, 200);
  EXPECT_EQ(registry.size(), 0u);
  ASSERT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/a/register", body)).status, 200);
  ASSERT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/b/register", body)).status, 200);
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/unregister")).status, 200);
  EXPECT_EQ(registry.size(), 0u);
}

TEST(SharedMemoryRoutesTest, HostileBodiesAndPaths) {
  TestShmObject object(1024);
  SharedMemoryRegistry registry;
  SharedMemoryRoutes routes(registry, Guard());
  const std::string target = "/v2/systemsharedmemory/region/r/register";
  for (const std::string& body :
       {std::string(""), std::string("[]"), std::string("{\"key\":1,\"byte_size\":4}"),
        std::string("{\"key\":\"" + object.key() + "\"}"),
        std::string("{\"key\":\"" + object.key() + "\",\"byte_size\":-1}"),
        std::string("{\"key\":\"" + object.key() + "\",\"byte_size\":1.5}"),
        std::string("{\"key\":\"" + object.key() + "\",\"offset\":-4,\"byte_size\":4}"),
        std::string("{\"key\":\"" + object.key() + "\",\"byte_size\":1025}"),
        std::string("{\"key\":\"" + object.key() + "\",\"offset\":18446744073709551615,\"byte_size\":4}"),
        std::string("{\"key\":\"/..\",\"byte_size\":4}"),
        std::string("{\"key\":\"/../../etc/passwd\",\"byte_size\":4}"),
        std::string("{\"key\":\"/no_such_infera_obj\",\"byte_size\":4}"),
        std::string(200, '[')}) {
    HttpResponse response = routes.Handle(Request("POST", target, body));
    EXPECT_EQ(response.status, 400) << body << " -> " << response.body;
  }
  EXPECT_EQ(registry.size(), 0u);
  // Bad names in the URL.
  const std::string ok_body = "{\"key\":\"" + object.key() + "\",\"byte_size\":4}";
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/a%2Fb/register", ok_body)).status, 400);
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/a%zz/register", ok_body)).status, 400);
  HttpResponse unnamed = routes.Handle(Request("POST", "/v2/systemsharedmemory/register", ok_body));
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_THAT(unnamed.body, HasSubstr("'region name' is necessary to register system shared memory region"));
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/a/frob", ok_body)).status, 404);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/systemsharedmemory/region/a/register", ok_body)).status, 405);
  EXPECT_EQ(registry.size(), 0u);
}

TEST(SharedMemoryRoutesTest, CudaAnswersAsACpuOnlyTriton) {
  SharedMemoryRegistry registry;
  SharedMemoryRoutes routes(registry, Guard());
  HttpResponse status = routes.Handle(Request("GET", "/v2/cudasharedmemory/status"));
  EXPECT_EQ(status.status, 200);
  EXPECT_EQ(status.body, "[]");
  HttpResponse reg = routes.Handle(Request("POST", "/v2/cudasharedmemory/region/c/register", "{}"));
  EXPECT_EQ(reg.status, 400);
  EXPECT_THAT(reg.body, HasSubstr("failed to register CUDA shared memory region: 'c', GPUs not supported"));
  HttpResponse unnamed = routes.Handle(Request("POST", "/v2/cudasharedmemory/register", "{}"));
  EXPECT_EQ(unnamed.status, 400);
  EXPECT_THAT(unnamed.body, HasSubstr("'region name' is necessary to register cuda shared memory region"));
  // Unregistering (all, or a name) succeeds: nothing is ever registered.
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/cudasharedmemory/unregister")).status, 200);
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/cudasharedmemory/region/c/unregister")).status, 200);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/cudasharedmemory/region/c/status")).status, 404);
}

TEST(SharedMemoryRoutesTest, AdminTokenGuardsRegisterNotStatus) {
  TestShmObject object(64);
  SharedMemoryRegistry registry;
  SharedMemoryRoutes routes(registry, Guard("s3cret"));
  const std::string body = "{\"key\":\"" + object.key() + "\",\"byte_size\":8}";
  const std::string target = "/v2/systemsharedmemory/region/r/register";
  EXPECT_EQ(routes.Handle(Request("POST", target, body)).status, 401);
  EXPECT_EQ(routes.Handle(Request("POST", target, body, {{"authorization", "Bearer wrong"}})).status, 401);
  EXPECT_EQ(routes.Handle(Request("POST", target, body, {{"authorization", "Bearer s3cret"}})).status, 200);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/systemsharedmemory/status")).status, 200);
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/unregister")).status, 401);
  EXPECT_EQ(registry.size(), 1u);
}

// The default server: registration (system and CUDA) is closed, naming how to open it;
// status and unregister stay harmless and answer as on an empty registry.
TEST(SharedMemoryRoutesTest, RegistrationIsClosedByDefault) {
  TestShmObject object(64);
  SharedMemoryRegistry registry;
  SharedMemoryRoutes routes(registry, Guard("", /*open=*/false));
  const std::string body = "{\"key\":\"" + object.key() + "\",\"byte_size\":8}";
  HttpResponse reg = routes.Handle(Request("POST", "/v2/systemsharedmemory/region/r/register", body));
  EXPECT_EQ(reg.status, 403);
  EXPECT_THAT(reg.body, HasSubstr("--allow-client-shm=true"));
  EXPECT_THAT(reg.body, HasSubstr("--admin-token"));
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/cudasharedmemory/region/c/register", "{}")).status, 403);
  EXPECT_EQ(registry.size(), 0u);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/systemsharedmemory/status")).body, "[]");
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/unregister")).status, 200);
  EXPECT_EQ(routes.Handle(Request("POST", "/v2/systemsharedmemory/region/r/unregister")).status, 200);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/cudasharedmemory/status")).status, 200);
  // The restricted-API header opens it to its holders, as the token does.
  AdminGuard::Options options;
  options.restrictions.push_back(*ParseApiRestriction("shared-memory:shm-key=v"));
  SharedMemoryRoutes restricted(registry, *AdminGuard::Create(std::move(options)));
  EXPECT_EQ(restricted.Handle(Request("POST", "/v2/systemsharedmemory/region/r/register", body,
                                      {{"shm-key", "v"}}))
                .status,
            200);
}

TEST(SharedMemoryRoutesTest, RestrictedCategoryNeedsItsHeaderEvenForStatus) {
  SharedMemoryRegistry registry;
  AdminGuard::Options options;
  options.restrictions.push_back(*ParseApiRestriction("shared-memory:shm-key=v"));
  SharedMemoryRoutes routes(registry, *AdminGuard::Create(std::move(options)));
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/systemsharedmemory/status")).status, 403);
  EXPECT_EQ(routes.Handle(Request("GET", "/v2/systemsharedmemory/status", "", {{"shm-key", "v"}})).status,
            200);
}

}  // namespace
}  // namespace infera
