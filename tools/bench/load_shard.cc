#include "tools/bench/load_shard.h"

#include <boost/asio.hpp>
#include <future>

namespace infera::bench {

namespace asio = boost::asio;

class LoadShard::Impl {
 public:
  Impl() : work_(asio::make_work_guard(io_)), poll_timer_(io_) {}

  ~Impl() {
    // Stop the loop before the client goes: pending handlers are then destroyed
    // without running (see http_client.h).
    io_.stop();
    if (thread_.joinable()) thread_.join();
    driver_.reset();
    client_.reset();
  }

  absl::Status Init(const ClientFactory& factory) {
    auto client = factory(io_, clock_);
    if (!client.ok()) return client.status();
    client_ = std::move(*client);
    thread_ = std::thread([this] { io_.run(); });
    return absl::OkStatus();
  }

  // Runs `fn` on the shard's thread and waits for it.
  template <typename Fn>
  auto Call(Fn fn) -> decltype(fn()) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto result = task.get_future();
    asio::post(io_, [&task] { task(); });
    return result.get();
  }

  void StartLevel(const LoadSpec& spec) {
    Call([this, spec] {
      driver_ = std::make_unique<LoadDriver>(spec, *client_, clock_);
      driver_->Start();
      SchedulePoll(driver_->Poll());
    });
  }

  WindowStats TakeWindow() {
    return Call([this] { return driver_ ? driver_->TakeWindow() : WindowStats(); });
  }

  int64_t CompletedInWindow() {
    return Call([this] { return driver_ ? driver_->completed_in_window() : int64_t{0}; });
  }

  int64_t InFlight() {
    return Call([this] { return driver_ ? driver_->in_flight() : int64_t{0}; });
  }

  DriverTotals StopLevel(std::chrono::milliseconds timeout) {
    Call([this] {
      poll_timer_.cancel();
      if (driver_) driver_->Stop();
    });
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (InFlight() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return Call([this] {
      if (driver_ && driver_->in_flight() > 0) client_->Close();  // fails what is left
      DriverTotals totals = driver_ ? driver_->totals() : DriverTotals();
      driver_.reset();
      return totals;
    });
  }

 private:
  void SchedulePoll(std::optional<int64_t> wake_ns) {
    if (!wake_ns) return;
    poll_timer_.expires_at(asio::steady_timer::time_point(std::chrono::nanoseconds(*wake_ns)));
    poll_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (ec || !driver_) return;
      SchedulePoll(driver_->Poll());
    });
  }

  SteadyClock clock_;
  asio::io_context io_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer poll_timer_;
  std::unique_ptr<InferClient> client_;
  std::unique_ptr<LoadDriver> driver_;
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<LoadShard>> LoadShard::Create(const ClientFactory& factory) {
  auto impl = std::make_unique<Impl>();
  if (absl::Status status = impl->Init(factory); !status.ok()) return status;
  return std::unique_ptr<LoadShard>(new LoadShard(std::move(impl)));
}

LoadShard::LoadShard(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LoadShard::~LoadShard() = default;
void LoadShard::StartLevel(const LoadSpec& spec) { impl_->StartLevel(spec); }
WindowStats LoadShard::TakeWindow() { return impl_->TakeWindow(); }
int64_t LoadShard::InFlight() { return impl_->InFlight(); }
int64_t LoadShard::CompletedInWindow() { return impl_->CompletedInWindow(); }
DriverTotals LoadShard::StopLevel(std::chrono::milliseconds timeout) { return impl_->StopLevel(timeout); }

}  // namespace infera::bench
