// TraceFileWriter: Triton's trace mode "triton" — traced requests written as Triton's
// JSON trace objects to the operator's trace file, from a background thread.
//
// The file is one JSON array; each trace adds, as Triton's does,
//   {"id": N, "model_name": "...", "model_version": V}
//   {"id": N, "timestamps": [{"name": "REQUEST_START", "ns": T}]}   (one per point)
//   {"id": N, "activity": "TENSOR_QUEUE_INPUT", "tensor": {"name", "data", "shape", "dtype"}}
// with ns on the steady clock (Triton's: monotonic, not wall time).
//
// Files (Triton's log_frequency, carried by each trace: the setting in effect for its
// model when it was sampled):
//   log_frequency 0  every trace goes to `path`, closed (the array ended) at shutdown.
//   log_frequency N  every N traces make a file of their own: path.0, path.1, ...; the
//                    last, partly filled one is closed at shutdown.
// `path` itself is written at most once: after it is closed (log_frequency went from 0
// to N) later traces go to indexed files whatever their log_frequency.
//
// Safety: request threads only queue (Submit never blocks and does no I/O); the queue
// is bounded by traces and by tensor bytes, and what does not fit is dropped and
// counted. Files are opened with O_NOFOLLOW (a symbolic link planted at the path or at
// path.N is refused, not followed), created 0640 and truncated. The path comes only
// from the command line (the settings API cannot change it).
//
// Thread-safe.
#ifndef INFERA_TRACING_TRACE_FILE_WRITER_H_
#define INFERA_TRACING_TRACE_FILE_WRITER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "api/tensor.h"

namespace infera {

// One traced request, as the file records it.
struct TritonTraceRecord {
  struct TensorActivity {
    const char* activity;  // "TENSOR_QUEUE_INPUT" or "TENSOR_BACKEND_OUTPUT"
    Tensor tensor;         // shares the request's / response's bytes
  };
  uint64_t id = 0;
  std::string model_name;
  int64_t model_version = -1;
  std::vector<std::pair<const char*, int64_t>> timestamps;  // Triton's name, steady ns
  std::vector<TensorActivity> tensors;
  int64_t log_frequency = 0;
};

class TraceFileWriter {
 public:
  struct Options {
    std::string path;
    size_t max_queued_traces = 4096;
    size_t max_queued_tensor_bytes = 64u << 20;
  };

  // InvalidArgument naming the problem: an empty path, a missing parent directory, a
  // path that is a directory or a symbolic link.
  static absl::StatusOr<std::unique_ptr<TraceFileWriter>> Create(Options options);
  ~TraceFileWriter();  // writes what is queued, ends the open file's array, joins

  // Triton's trace ids: 1, 2, ... for this process.
  uint64_t NextId() { return next_id_.fetch_add(1) + 1; }

  // Queues a finished trace; never blocks, never touches the file.
  void Submit(TritonTraceRecord record);

  uint64_t written_traces() const { return written_.load(); }
  uint64_t dropped_traces() const { return dropped_.load(); }

  // Formats one trace's objects, comma-separated (no brackets); exposed for tests.
  static std::string FormatTrace(const TritonTraceRecord& record);

 private:
  explicit TraceFileWriter(Options options);
  void WriteLoop();
  bool HasWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || !queue_.empty(); }
  void Write(const TritonTraceRecord& record);  // writer thread only
  void CloseFile();                             // writer thread only

  const Options options_;
  absl::Mutex mu_;
  std::vector<TritonTraceRecord> queue_ ABSL_GUARDED_BY(mu_);
  size_t queued_tensor_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> next_id_{0};
  std::atomic<uint64_t> written_{0};
  std::atomic<uint64_t> dropped_{0};

  // The writer thread's file state.
  int fd_ = -1;
  bool fd_indexed_ = false;   // the open file is path.N
  bool plain_used_ = false;   // `path` itself was opened already
  uint64_t next_index_ = 0;
  int64_t in_file_ = 0;       // traces in the open file
  std::string failed_path_;   // the last path that could not be opened (logged once)
  std::thread writer_;
};

}  // namespace infera

#endif  // INFERA_TRACING_TRACE_FILE_WRITER_H_
