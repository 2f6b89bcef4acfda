#include "console/console_stream.h"

#include <charconv>
#include <map>
#include <utility>

#include "common/str_cat.h"
#include "http/http_status.h"

namespace infera {
namespace {

HttpResponse Unavailable(std::string_view message) {
  HttpResponse r = ErrorResponse(503, message);
  r.headers.emplace_back("Retry-After", "1");
  return r;
}

}  // namespace

ConsoleStream::ConsoleStream(Options options) : options_(std::move(options)), window_(options_.quantile_window) {
  ticker_ = std::thread([this] { Run(); });
}

ConsoleStream::~ConsoleStream() { Shutdown(); }

absl::StatusOr<int> ConsoleStream::ParseIntervalMs(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return kDefaultIntervalMs;
  std::string_view query = target.substr(q + 1);
  int interval = kDefaultIntervalMs;
  bool seen = false;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    const std::string_view name = pair.substr(0, eq);
    if (name != "interval_ms") {
      return absl::InvalidArgumentError(
          StrCat("unknown query parameter '", name.substr(0, 64), "' (the stream takes only interval_ms)"));
    }
    if (seen) return absl::InvalidArgumentError("interval_ms given more than once");
    seen = true;
    const std::string_view value = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    int parsed = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size()) {
      return absl::InvalidArgumentError(StrCat("interval_ms must be an integer number of milliseconds in [",
                                               kMinIntervalMs, ", ", kMaxIntervalMs, "]"));
    }
    if (parsed < kMinIntervalMs || parsed > kMaxIntervalMs) {
      return absl::InvalidArgumentError(StrCat("interval_ms ", parsed, " is out of range [", kMinIntervalMs,
                                               ", ", kMaxIntervalMs, "]"));
    }
    interval = parsed;
  }
  return interval;
}

void ConsoleStream::Subscribe(const HttpRequest& request, HttpResponder responder) {
  if (request.method != "GET") {
    HttpResponse r = ErrorResponse(405, "the console stream takes GET only");
    r.headers.emplace_back("Allow", "GET");
    return std::move(responder).Send(std::move(r));
  }
  absl::StatusOr<int> interval = ParseIntervalMs(request.target);
  if (!interval.ok()) return std::move(responder).Send(
        ErrorResponse(400, std::string_view(interval.status().message().data(), interval.status().message().size())));
  // Rounded up to a whole number of ticks.
  const int64_t tick = std::max<int64_t>(1, options_.tick.count());
  const std::chrono::milliseconds period(((*interval + tick - 1) / tick) * tick);
  absl::MutexLock lock(&mu_);
  if (stopping_) return std::move(responder).Send(Unavailable("the server is shutting down"));
  if (static_cast<int>(subscribers_.size()) >= options_.max_subscribers) {
    return std::move(responder).Send(Unavailable(
        StrCat("too many console streams open (at most ", options_.max_subscribers, ")")));
  }
  HttpResponse head{200, "text/event-stream", StrCat("retry: 2000\n\n"),
                    {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}}};
  HttpStream stream = std::move(responder).StartStream(std::move(head));
  // The first event goes out at the next tick.
  subscribers_.push_back(Subscriber{std::move(stream), period, std::chrono::steady_clock::now()});
}

std::string ConsoleStream::Event(int interval_ms, const std::string& json) {
  // json is an object: "{...}" -> "{"interval_ms":N,...}".
  return StrCat("event: stats\ndata: {\"interval_ms\":", interval_ms, ",", std::string_view(json).substr(1),
                "\n\n");
}

void ConsoleStream::Run() {
  absl::MutexLock lock(&mu_);
  while (!stopping_) {
    if (subscribers_.empty()) {
      mu_.Await(absl::Condition(
          +[](ConsoleStream* s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) {
            return s->stopping_ || !s->subscribers_.empty();
          },
          this));
      continue;
    }
    mu_.AwaitWithTimeout(absl::Condition(&stopping_), absl::FromChrono(options_.tick));
    if (stopping_) break;
    const auto now = std::chrono::steady_clock::now();
    bool any_due = false;
    for (auto it = subscribers_.begin(); it != subscribers_.end();) {
      if (it->stream.client_gone()) {
        it = subscribers_.erase(it);  // finishes the (dead) stream
        continue;
      }
      any_due = any_due || it->next_due <= now;
      ++it;
    }
    if (!any_due) continue;
    const int subscribers = static_cast<int>(subscribers_.size());
    std::string json;
    {
      // Reading takes the manager's locks: not under ours.
      mu_.Unlock();
      std::vector<ConsoleModelReading> models = options_.read_models ? options_.read_models()
                                                                     : std::vector<ConsoleModelReading>{};
      ConsoleServerReading server = options_.read_server ? options_.read_server() : ConsoleServerReading{};
      server.subscribers = subscribers;
      const int64_t wall_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
      json = window_.Render(std::chrono::steady_clock::now(), wall_ms, server, models);
      mu_.Lock();
    }
    ++snapshots_;
    std::map<int64_t, std::string> events;  // one text per distinct interval
    for (Subscriber& s : subscribers_) {
      if (s.next_due > now) continue;
      std::string& event = events[s.interval.count()];
      if (event.empty()) event = Event(static_cast<int>(s.interval.count()), json);
      s.stream.Write(event);
      s.next_due += s.interval;
      if (s.next_due <= now) s.next_due = now + s.interval;  // fell behind: no burst
    }
  }
}

void ConsoleStream::Shutdown() {
  absl::MutexLock shutting_down(&shutdown_mu_);  // concurrent calls wait for the first
  std::list<Subscriber> ending;
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (ticker_.joinable()) ticker_.join();
  {
    absl::MutexLock lock(&mu_);
    ending.swap(subscribers_);
  }
  for (Subscriber& s : ending) {
    s.stream.Write("event: end\ndata: {\"reason\":\"shutdown\"}\n\n");
    std::move(s.stream).Finish();
  }
}

int ConsoleStream::subscribers() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(subscribers_.size());
}

uint64_t ConsoleStream::snapshots_rendered() const {
  absl::MutexLock lock(&mu_);
  return snapshots_;
}

}  // namespace infera
