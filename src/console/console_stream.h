// ConsoleStream: GET /v2/console/stream, the web console's live statistics as
// Server-Sent Events (docs/console.md, "Wire contract").
//
// One ticker thread wakes every `tick` while anyone is subscribed (and waits on a
// condition otherwise). When a subscriber is due it reads the server's figures once
// (`read_models`, `read_server`), renders them once (StatsWindow) and writes the same
// event to every due subscriber: the cost per tick does not grow with the number of
// viewers. Subscribers are bounded (`max_subscribers`, beyond: 503 + Retry-After); one
// whose client went away (its connection's cancellation token) is dropped at the next
// tick. Shutdown() ends every stream with `event: end` and refuses new ones (503).
//
// Threading: Subscribe() runs on an HTTP I/O thread and only takes the mutex; the
// reading and rendering run on the ticker thread, outside the mutex. The ticker is
// joined by Shutdown() (also run by the destructor).
//
// Thread-safe.
#ifndef INFERA_CONSOLE_CONSOLE_STREAM_H_
#define INFERA_CONSOLE_CONSOLE_STREAM_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/synchronization/mutex.h"
#include "console/console_snapshot.h"
#include "http/http_message.h"
#include "http/http_server.h"

namespace infera {

class ConsoleStream {
 public:
  static constexpr int kMinIntervalMs = 250;
  static constexpr int kMaxIntervalMs = 10000;
  static constexpr int kDefaultIntervalMs = 1000;

  struct Options {
    int max_subscribers = 32;
    // The ticker's period; intervals are rounded up to a multiple of it.
    std::chrono::milliseconds tick{kMinIntervalMs};
    std::chrono::milliseconds quantile_window{std::chrono::seconds(10)};
    // Read the server's figures; called on the ticker thread, must be thread-safe.
    std::function<std::vector<ConsoleModelReading>()> read_models;
    std::function<ConsoleServerReading()> read_server;
  };

  explicit ConsoleStream(Options options);
  ~ConsoleStream();
  ConsoleStream(const ConsoleStream&) = delete;
  ConsoleStream& operator=(const ConsoleStream&) = delete;

  // The stream's interval from a request target's query: `interval_ms=N` (N in
  // [kMinIntervalMs, kMaxIntervalMs]) or none (kDefaultIntervalMs). InvalidArgument
  // naming the parameter otherwise (not a number, out of range, unknown parameter).
  static absl::StatusOr<int> ParseIntervalMs(std::string_view target);

  // Answers `request` (GET /v2/console/stream): 400 for a bad query, 503 when full or
  // shut down, else starts the event stream.
  void Subscribe(const HttpRequest& request, HttpResponder responder);

  // Ends every stream (`event: end`), refuses new subscribers, joins the ticker.
  // Idempotent.
  void Shutdown();

  int subscribers() const;
  // Snapshots rendered so far (one per tick with a due subscriber), for tests.
  uint64_t snapshots_rendered() const;

 private:
  struct Subscriber {
    HttpStream stream;
    std::chrono::milliseconds interval;
    std::chrono::steady_clock::time_point next_due;
  };

  void Run();
  static std::string Event(int interval_ms, const std::string& json);

  const Options options_;
  mutable absl::Mutex mu_;
  std::list<Subscriber> subscribers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t snapshots_ ABSL_GUARDED_BY(mu_) = 0;
  StatsWindow window_;  // the ticker thread's alone
  absl::Mutex shutdown_mu_;  // serialises Shutdown() (joining the ticker)
  std::thread ticker_ ABSL_GUARDED_BY(shutdown_mu_);
};

}  // namespace infera

#endif  // INFERA_CONSOLE_CONSOLE_STREAM_H_
