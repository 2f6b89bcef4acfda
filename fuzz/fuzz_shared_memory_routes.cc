// Fuzz target: the system shared-memory HTTP routes (http/shared_memory_routes.h) and the
// region reads and writes behind them: the URL path (region names, percent-escapes), the
// register body (JSON through ReadJson, then the key / offset / byte_size checks of
// shm/shared_memory_registry.h), the admin guard's verdict, and SharedMemoryRegion::Read /
// Write of what got registered while the client's object changes size under them.
//
// Input: byte 0 selects the method (bit 0: POST, else GET), the route family (bit 1:
// "/v2/systemsharedmemory", else "/v2/cudasharedmemory"), the guard (bit 2: registration
// closed, the default server; else opened with --allow-client-shm=true) and whether the
// object is resized first (bit 3: to the size in byte 1 times 64); then the path up to the
// first '\n'; the rest is the body. "$K" in the body stands for the key of one real shm
// object (4 KiB, created at start), so registrations with fuzzed offsets and sizes can
// succeed. Every answer must be a well-formed status; every read or write of a registered
// region must answer OK or an error — never a crash, SIGBUS or a sanitizer report.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "api/admin_guard.h"
#include "http/http_message.h"
#include "http/shared_memory_routes.h"
#include "shm/shared_memory_registry.h"

namespace {

constexpr size_t kObjectSize = 4096;

struct Fixture {
  std::string key = "/infera_fuzz_shm_" + std::to_string(getpid());
  int fd = -1;
  infera::SharedMemoryRegistry registry{/*max_regions=*/8, /*max_request_bytes=*/1 << 20};
  std::optional<infera::SharedMemoryRoutes> open_routes;
  std::optional<infera::SharedMemoryRoutes> closed_routes;
};

Fixture& Get() {
  static Fixture* fixture = [] {
    auto* f = new Fixture();  // lives for the process
    f->fd = shm_open(f->key.c_str(), O_RDWR | O_CREAT, 0600);
    if (f->fd < 0 || ftruncate(f->fd, kObjectSize) != 0) std::abort();
    std::atexit([] { shm_unlink(Get().key.c_str()); });
    infera::AdminGuard::Options open;
    open.opened = {infera::ApiCategory::kSharedMemory};
    f->open_routes.emplace(f->registry, *infera::AdminGuard::Create(std::move(open)));
    f->closed_routes.emplace(f->registry, *infera::AdminGuard::Create({}));
    return f;
  }();
  return *fixture;
}

std::string WithKey(std::string_view body, const std::string& key) {
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] == '$' && i + 1 < body.size() && body[i + 1] == 'K') {
      out += key;
      ++i;
    } else {
      out += body[i];
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  Fixture& fixture = Get();
  const uint8_t flags = data[0];
  if (flags & 8) {
    if (ftruncate(fixture.fd, static_cast<off_t>(data[1]) * 64) != 0) std::abort();
  }
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const size_t newline = rest.find('\n');
  infera::HttpRequest request;
  request.method = (flags & 1) ? "POST" : "GET";
  request.target = std::string((flags & 2) ? "/v2/systemsharedmemory" : "/v2/cudasharedmemory") +
                   std::string(rest.substr(0, newline));
  if (newline != std::string_view::npos) request.body = WithKey(rest.substr(newline + 1), fixture.key);
  if (infera::SharedMemoryRoutes::Matches(request.path())) {
    const infera::SharedMemoryRoutes& routes = (flags & 4) ? *fixture.closed_routes : *fixture.open_routes;
    infera::HttpResponse response = routes.Handle(request);
    if (response.status < 200 || response.status > 599) __builtin_trap();
  }
  // Every registered region, read and written whole and at its end, whatever the object's
  // size is now: the server must get an answer, never a fault.
  auto regions = fixture.registry.Status("");
  if (!regions.ok()) __builtin_trap();
  std::vector<uint8_t> buffer;
  for (const infera::SharedMemoryRegionInfo& info : *regions) {
    auto region = fixture.registry.Find(info.name);
    if (!region.ok()) __builtin_trap();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(info.byte_size, 1 << 16));
    buffer.assign(n, 0xab);
    (void)(*region)->Read(0, n, buffer.data());
    (void)(*region)->Read(info.byte_size - 1, 1, buffer.data());
    (void)(*region)->Write(info.byte_size - n, buffer.data(), n);
    (void)(*region)->CheckObjectSize();
  }
  if (flags & 8) {
    if (ftruncate(fixture.fd, kObjectSize) != 0) std::abort();
  }
  return 0;
}
