#include "grpc/shared_memory_handlers.h"

#include <optional>
#include <string_view>

#include "common/str_cat.h"

namespace infera {
namespace {

absl::Status NoRegistry() {
  return absl::UnavailableError("system shared memory is not enabled on this server");
}

}  // namespace

absl::Status SystemSharedMemoryStatus(const SharedMemoryRegistry* registry,
                                      const inference::SystemSharedMemoryStatusRequest& request,
                                      inference::SystemSharedMemoryStatusResponse* response) {
  if (registry == nullptr) return NoRegistry();
  absl::StatusOr<std::vector<SharedMemoryRegionInfo>> regions = registry->Status(request.name());
  if (!regions.ok()) return regions.status();
  for (const SharedMemoryRegionInfo& info : *regions) {
    auto& status = (*response->mutable_regions())[info.name];
    status.set_name(info.name);
    status.set_key(info.key);
    status.set_offset(info.offset);
    status.set_byte_size(info.byte_size);
  }
  return absl::OkStatus();
}

absl::Status SystemSharedMemoryRegister(SharedMemoryRegistry* registry,
                                        const inference::SystemSharedMemoryRegisterRequest& request) {
  if (registry == nullptr) return NoRegistry();
  if (request.name().empty()) return SharedMemoryRegionNameRequired("system");
  return registry->Register(request.name(), request.key(), request.offset(), request.byte_size());
}

absl::Status SystemSharedMemoryUnregister(
    SharedMemoryRegistry* registry, const inference::SystemSharedMemoryUnregisterRequest& request) {
  if (registry == nullptr) return NoRegistry();
  if (request.name().empty()) {
    registry->UnregisterAll();
    return absl::OkStatus();
  }
  return registry->Unregister(request.name());
}

absl::Status CudaSharedMemoryStatus(const inference::CudaSharedMemoryStatusRequest& request) {
  if (request.name().empty()) return absl::OkStatus();
  return absl::NotFoundError(StrCat("Unable to find cuda shared memory region: '",
                                    request.name().substr(0, 128), "'"));
}

absl::Status CudaSharedMemoryRegister(const inference::CudaSharedMemoryRegisterRequest& request) {
  return CudaSharedMemoryChange(request.name(), "register");
}

absl::Status CudaSharedMemoryUnregister(const inference::CudaSharedMemoryUnregisterRequest& request) {
  return CudaSharedMemoryChange(request.name(), "unregister");
}

}  // namespace infera
