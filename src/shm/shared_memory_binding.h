// Binding of request inputs and outputs to registered shared-memory regions: the one
// transport-neutral step both frontends run after decoding (HTTP: http/kserve_routes.cc,
// gRPC: grpc/infer_call.cc), so the two answer alike.
//
// Parameters (Triton's names), on an input that carries no data or on a requested output:
//   shared_memory_region     string, a name registered in the SharedMemoryRegistry
//   shared_memory_byte_size  integer >= 0, required
//   shared_memory_offset     integer >= 0, optional (0), relative to the region's start
//
// Inputs: the bytes [offset, offset + byte_size) of the region are copied (pread on the
//   region's fd, SharedMemoryRegion::Read) into a 64-byte-aligned Buffer at bind time,
//   before the request is queued; byte_size must equal what the datatype and shape need;
//   BYTES data is parsed (4-byte length prefixes) from the copy and must fill it exactly.
//   Nothing the client does to its object afterwards (rewrite, shrink, unlink) reaches
//   the request, and a shrink before the copy is a short read: InvalidArgument naming it,
//   never SIGBUS. A request copies at most registry.max_request_bytes() in all.
// Outputs: bound when the object still holds the region (fstat); after the model ran,
//   SharedMemoryOutputs::WriteInto writes each bound output's bytes into its region
//   (pwrite after another size check, SharedMemoryRegion::Write; InvalidArgument naming
//   the needed size when byte_size is too small, or the shrink), empties its data and
//   records the parameters to echo in InferResponse::shared_memory_outputs (region,
//   byte_size = the bytes written, offset when given), which the encoders send instead
//   of data.
//
// Every problem is InvalidArgument naming the tensor and the parameter (an unknown
// region: "Unable to find shared memory region: '<name>'"); offsets and sizes use checked
// arithmetic. Thread-safe (no shared state besides the registry, itself thread-safe).
//
// Usage:
//   ASSIGN_OR_RETURN(SharedMemoryOutputs outputs, BindSharedMemory(registry, request));
//   ... run the model, get `response` ...
//   RETURN_IF_ERROR(outputs.WriteInto(response));
#ifndef INFERA_SHM_SHARED_MEMORY_BINDING_H_
#define INFERA_SHM_SHARED_MEMORY_BINDING_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/infer_request.h"
#include "shm/shared_memory_registry.h"

namespace infera {

inline constexpr char kShmRegionParameter[] = "shared_memory_region";
inline constexpr char kShmByteSizeParameter[] = "shared_memory_byte_size";
inline constexpr char kShmOffsetParameter[] = "shared_memory_offset";

// True when `parameters` name a shared-memory region (what the decoders look for).
bool NamesSharedMemoryRegion(const Parameters& parameters);

// The outputs of one request bound to regions; empty for most requests. Holds each
// region the request named, inputs' included (its fd, and its place in the registry's
// status after an unregister: SharedMemoryRegistry::Unregister), until it is destroyed
// when the request ends (InferPipeline lets it go before the final answer leaves).
class SharedMemoryOutputs {
 public:
  bool empty() const { return bindings_.empty() && inputs_held_.empty(); }
  // See the file comment. Leaves outputs not bound to a region as they are.
  absl::Status WriteInto(InferResponse& response) const;

 private:
  friend absl::StatusOr<SharedMemoryOutputs> BindSharedMemory(const SharedMemoryRegistry*,
                                                              InferRequest&);
  struct Binding {
    std::string output;
    std::shared_ptr<const SharedMemoryRegion> region;
    uint64_t offset = 0;
    uint64_t byte_size = 0;
    bool offset_given = false;
  };
  std::vector<Binding> bindings_;
  std::vector<std::shared_ptr<const SharedMemoryRegion>> inputs_held_;
};

// Resolves the inputs that name a region (filling their data) and binds the requested
// outputs that do. `registry` may be null (no shared memory on this server: a request
// naming a region is then InvalidArgument).
absl::StatusOr<SharedMemoryOutputs> BindSharedMemory(const SharedMemoryRegistry* registry,
                                                     InferRequest& request);

}  // namespace infera

#endif  // INFERA_SHM_SHARED_MEMORY_BINDING_H_
