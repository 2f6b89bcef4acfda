#include "tracing/tracer.h"

#include "common/logging.h"
#include "common/str_cat.h"
#include "tracing/otlp_json.h"

namespace infera {

absl::StatusOr<std::unique_ptr<Tracer>> Tracer::Create(Options options) {
  auto url = ParseHttpUrl(options.endpoint);
  if (!url.ok()) return absl::InvalidArgumentError(StrCat("trace endpoint: ", url.status().message()));
  return std::unique_ptr<Tracer>(new Tracer(std::move(options), std::move(*url)));
}

Tracer::Tracer(Options options, HttpUrl url) : options_(std::move(options)), url_(std::move(url)) {
  exporter_ = std::thread([this] { ExportLoop(); });
}

Tracer::~Tracer() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  exporter_.join();
}

void Tracer::Submit(std::vector<SpanRecord> spans) {
  absl::MutexLock lock(&mu_);
  const size_t room = options_.max_queued_spans - std::min(options_.max_queued_spans, buffer_.size());
  if (spans.size() > room) {
    dropped_.fetch_add(spans.size() - room, std::memory_order_relaxed);
    spans.resize(room);
  }
  for (SpanRecord& span : spans) buffer_.push_back(std::move(span));
}

void Tracer::ExportLoop() {
  bool stopping = false;
  while (!stopping) {
    std::vector<SpanRecord> batch;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || buffer_.size() >= options_.max_batch_spans;
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::FromChrono(options_.flush_interval));
      stopping = stopping_;
      const size_t n = std::min(buffer_.size(), stopping ? buffer_.size() : options_.max_batch_spans);
      batch.assign(std::make_move_iterator(buffer_.begin()), std::make_move_iterator(buffer_.begin() + n));
      buffer_.erase(buffer_.begin(), buffer_.begin() + n);
    }
    if (batch.empty()) continue;
    auto status = HttpPost(url_, "application/json",
                           SpansToOtlpJson(batch, options_.service_name, options_.service_version),
                           options_.export_timeout);
    if (status.ok() && *status >= 200 && *status < 300) {
      exported_.fetch_add(batch.size(), std::memory_order_relaxed);
    } else {
      dropped_.fetch_add(batch.size(), std::memory_order_relaxed);
      INFERA_LOG(VERBOSE) << "trace export to " << options_.endpoint << " failed: "
                          << (status.ok() ? StrCat("HTTP ", *status) : std::string(status.status().message()));
    }
  }
}

}  // namespace infera
