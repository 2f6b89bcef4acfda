// LoadShard: one event-loop thread of the load generator — a Boost.Asio io_context,
// the InferClient whose connections live on it, and the LoadDriver of the current
// level. The run controller (bench_runner.h) talks to it from its own thread; every
// call below is posted to the shard's thread and waited for, so the client and driver
// are only ever touched by that thread.
//
// One shard (the default) serves many connections; --client-threads N gives N shards,
// each with its share of the concurrency or request rate.
//
// Thread-safe (the public methods may be called from any one controller thread).
//
// Usage:
//   ASSIGN_OR_RETURN(auto shard, LoadShard::Create(make_http_client));
//   shard->StartLevel(spec);
//   WindowStats w = shard->TakeWindow();
//   DriverTotals level = shard->StopLevel(std::chrono::seconds(30));
#ifndef INFERA_TOOLS_BENCH_LOAD_SHARD_H_
#define INFERA_TOOLS_BENCH_LOAD_SHARD_H_

#include <chrono>
#include <functional>
#include <memory>
#include <thread>

#include "absl/status/statusor.h"
#include "tools/bench/bench_clock.h"
#include "tools/bench/infer_client.h"
#include "tools/bench/load_driver.h"
#include "tools/bench/window_stats.h"

namespace boost::asio {
class io_context;
}

namespace infera::bench {

// Builds the shard's client on its io_context (HTTP, gRPC, ...).
using ClientFactory = std::function<absl::StatusOr<std::unique_ptr<InferClient>>(
    boost::asio::io_context& io, const Clock& clock)>;

class LoadShard {
 public:
  static absl::StatusOr<std::unique_ptr<LoadShard>> Create(const ClientFactory& factory);
  ~LoadShard();

  // Starts a level (a fresh driver) with `spec`.
  void StartLevel(const LoadSpec& spec);
  WindowStats TakeWindow();
  int64_t InFlight();
  // Requests completed (ok or failed) in the current window so far.
  int64_t CompletedInWindow();
  // Stops sending and waits for outstanding requests (up to `timeout`; then the
  // client's connections are closed, failing what is left). Returns the level's totals.
  DriverTotals StopLevel(std::chrono::milliseconds timeout);

  class Impl;

 private:
  explicit LoadShard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace infera::bench

#endif  // INFERA_TOOLS_BENCH_LOAD_SHARD_H_
