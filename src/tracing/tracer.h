// Tracer: exports finished spans over OTLP/HTTP (JSON) from a background thread.
// Which requests are traced is TraceSettings' decision (trace_settings.h); the path a
// traced inference takes is InferTrace (infer_trace.h).
//
// Export never slows requests: Submit() appends to a bounded buffer and returns; when
// the buffer is full (a dead or slow collector) spans are dropped and counted. The
// exporter thread sends batches of up to `max_batch_spans` every `flush_interval`,
// each POST bounded by `export_timeout`.
//
// Thread-safe.
#ifndef INFERA_TRACING_TRACER_H_
#define INFERA_TRACING_TRACER_H_

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "tracing/http_post.h"
#include "tracing/trace_context.h"

namespace infera {

class Tracer {
 public:
  struct Options {
    std::string endpoint;  // e.g. http://127.0.0.1:4318/v1/traces
    std::string service_name = "infera";
    std::string service_version;
    size_t max_queued_spans = 8192;
    size_t max_batch_spans = 512;
    std::chrono::milliseconds flush_interval{500};
    std::chrono::milliseconds export_timeout{1000};
  };

  // InvalidArgument for a bad endpoint URL.
  static absl::StatusOr<std::unique_ptr<Tracer>> Create(Options options);
  ~Tracer();  // exports what is buffered (bounded by export_timeout), joins

  // Hands finished spans to the exporter; never blocks.
  void Submit(std::vector<SpanRecord> spans);

  uint64_t exported_spans() const { return exported_.load(); }
  uint64_t dropped_spans() const { return dropped_.load(); }

 private:
  Tracer(Options options, HttpUrl url);
  void ExportLoop();

  const Options options_;
  const HttpUrl url_;
  absl::Mutex mu_;
  std::vector<SpanRecord> buffer_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> exported_{0};
  std::atomic<uint64_t> dropped_{0};
  std::thread exporter_;
};

}  // namespace infera

#endif  // INFERA_TRACING_TRACER_H_
