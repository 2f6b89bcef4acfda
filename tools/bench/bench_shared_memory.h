// BenchSharedMemory: `infera bench --shared-memory system` (perf_analyzer's flag), the
// client side of Triton's system shared-memory extension.
//
// Before the run: one POSIX shm object holds every payload's input tensors (each at a
// 64-byte aligned offset, so the server can use them zero-copy), and a second one holds
// one --output-shared-memory-size slot per model output (shared by all requests, as
// perf_analyzer does: the bytes written are not read back, so --check is refused).
// Both are registered with the server (HTTP register route or gRPC
// SystemSharedMemoryRegister, by -i), and each payload's `shm` says where its tensors
// are, so requests carry no tensor bytes at all. After the run the regions are
// unregistered and the objects unlinked (also when the bench fails midway: the
// destructor unlinks).
//
// Not thread-safe; created and destroyed on the command's thread.
#ifndef INFERA_TOOLS_BENCH_BENCH_SHARED_MEMORY_H_
#define INFERA_TOOLS_BENCH_BENCH_SHARED_MEMORY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/bench/input_data.h"

namespace infera::bench {

class BenchSharedMemory {
 public:
  struct Region {
    std::string name;  // the registered region name
    std::string key;   // the shm object ("/infera_bench_<pid>_in")
    uint64_t byte_size = 0;
  };
  // Registers / unregisters one region with the server (by the run's protocol).
  using Register = std::function<absl::Status(const Region&)>;
  using Unregister = std::function<absl::Status(const std::string& name)>;

  // Creates and fills the objects, sets every payload's `shm`, and registers both
  // regions. `output_names`: the model's outputs, each given `output_slot_bytes`.
  static absl::StatusOr<std::unique_ptr<BenchSharedMemory>> Create(
      std::vector<PayloadData>& payloads, const std::vector<std::string>& output_names,
      uint64_t output_slot_bytes, Register register_region, Unregister unregister_region);
  ~BenchSharedMemory();  // unregisters (errors ignored), unmaps, unlinks

  BenchSharedMemory(const BenchSharedMemory&) = delete;
  BenchSharedMemory& operator=(const BenchSharedMemory&) = delete;

 private:
  struct Object {
    Region region;
    void* mapping = nullptr;
    uint64_t size = 0;
    bool registered = false;
  };
  BenchSharedMemory() = default;
  absl::Status MakeObject(Object& object);

  Unregister unregister_;
  std::vector<Object> objects_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_BENCH_SHARED_MEMORY_H_
