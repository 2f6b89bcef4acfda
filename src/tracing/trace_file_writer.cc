#include "tracing/trace_file_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "api/data_type.h"
#include "api/float16.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

template <typename T>
T Load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

void AppendNumber(std::string& out, double value) {
  char buffer[32];
  const int n = std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  out.append(buffer, n > 0 ? static_cast<size_t>(n) : 0);
}

// Triton's "data": the elements, comma-separated ("1,2,3"; BYTES elements as text).
std::string TensorData(const Tensor& tensor) {
  std::string out;
  const uint8_t* p = tensor.data.data();
  const size_t size = tensor.data.size();
  if (tensor.dtype == DataType::kBytes) {
    absl::StatusOr<std::vector<std::string_view>> elements = SplitBytesElements(tensor.data.AsStringView());
    if (!elements.ok()) return out;
    for (size_t i = 0; i < elements->size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append((*elements)[i]);
    }
    return out;
  }
  const size_t width = DataTypeByteSize(tensor.dtype);
  if (width == 0) return out;
  for (size_t at = 0; at + width <= size; at += width) {
    if (at > 0) out.push_back(',');
    const uint8_t* e = p + at;
    switch (tensor.dtype) {
      case DataType::kBool: out.append(*e != 0 ? "1" : "0"); break;
      case DataType::kUint8: out.append(std::to_string(*e)); break;
      case DataType::kUint16: out.append(std::to_string(Load<uint16_t>(e))); break;
      case DataType::kUint32: out.append(std::to_string(Load<uint32_t>(e))); break;
      case DataType::kUint64: out.append(std::to_string(Load<uint64_t>(e))); break;
      case DataType::kInt8: out.append(std::to_string(Load<int8_t>(e))); break;
      case DataType::kInt16: out.append(std::to_string(Load<int16_t>(e))); break;
      case DataType::kInt32: out.append(std::to_string(Load<int32_t>(e))); break;
      case DataType::kInt64: out.append(std::to_string(Load<int64_t>(e))); break;
      case DataType::kFp16: AppendNumber(out, HalfToFloat(Load<uint16_t>(e))); break;
      case DataType::kBf16: AppendNumber(out, Bf16ToFloat(Load<uint16_t>(e))); break;
      case DataType::kFp32: AppendNumber(out, Load<float>(e)); break;
      case DataType::kFp64: AppendNumber(out, Load<double>(e)); break;
      default: break;
    }
  }
  return out;
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TraceFileWriter>> TraceFileWriter::Create(Options options) {
  if (options.path.empty()) return absl::InvalidArgumentError("the trace file path is empty");
  const size_t slash = options.path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : options.path.substr(0, slash);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(StrCat("trace file '", options.path, "': directory '", dir, "' does not exist"));
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    return absl::InvalidArgumentError(StrCat("trace file '", options.path, "': directory '", dir, "' is not writable"));
  }
  if (::lstat(options.path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      return absl::InvalidArgumentError(
          StrCat("trace file '", options.path, "' is a symbolic link (refused: name the file itself)"));
    }
    if (!S_ISREG(st.st_mode)) {
      return absl::InvalidArgumentError(StrCat("trace file '", options.path, "' exists and is not a regular file"));
    }
  }
  return std::unique_ptr<TraceFileWriter>(new TraceFileWriter(std::move(options)));
}

TraceFileWriter::TraceFileWriter(Options options) : options_(std::move(options)) {
  writer_ = std::thread([this] { WriteLoop(); });
}

TraceFileWriter::~TraceFileWriter() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  writer_.join();
  if (dropped_.load() > 0) {
    INFERA_LOG(WARNING) << "trace file '" << options_.path << "': " << dropped_.load()
                        << " traces dropped (queue full or a file that could not be written), "
                        << written_.load() << " written";
  }
}

void TraceFileWriter::Submit(TritonTraceRecord record) {
  size_t tensor_bytes = 0;
  for (const auto& activity : record.tensors) tensor_bytes += activity.tensor.data.size();
  absl::MutexLock lock(&mu_);
  if (stopping_ || queue_.size() >= options_.max_queued_traces ||
      queued_tensor_bytes_ + tensor_bytes > options_.max_queued_tensor_bytes) {
    dropped_.fetch_add(1);
    return;
  }
  queued_tensor_bytes_ += tensor_bytes;
  queue_.push_back(std::move(record));
}

void TraceFileWriter::WriteLoop() {
  for (;;) {
    std::vector<TritonTraceRecord> batch;
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(this, &TraceFileWriter::HasWork));
      batch.swap(queue_);
      queued_tensor_bytes_ = 0;
      stopping = stopping_;
    }
    for (const TritonTraceRecord& record : batch) Write(record);
    if (stopping) {
      absl::MutexLock lock(&mu_);
      if (queue_.empty()) break;  // Submit refuses once stopping_: this is the end
    }
  }
  CloseFile();
}

std::string TraceFileWriter::FormatTrace(const TritonTraceRecord& record) {
  rapidjson::StringBuffer buffer;
  std::string out;
  auto flush = [&] {
    if (!out.empty()) out.push_back(',');
    out.append(buffer.GetString(), buffer.GetSize());
    buffer.Clear();
  };
  {
    Writer w(buffer);
    w.StartObject();
    w.Key("id");
    w.Uint64(record.id);
    w.Key("model_name");
    String(w, record.model_name);
    w.Key("model_version");
    w.Int64(record.model_version);
    w.EndObject();
  }
  flush();
  for (const auto& [name, ns] : record.timestamps) {
    Writer w(buffer);
    w.StartObject();
    w.Key("id");
    w.Uint64(record.id);
    w.Key("timestamps");
    w.StartArray();
    w.StartObject();
    w.Key("name");
    w.String(name);
    w.Key("ns");
    w.Int64(ns);
    w.EndObject();
    w.EndArray();
    w.EndObject();
    flush();
  }
  for (const auto& activity : record.tensors) {
    Writer w(buffer);
    w.StartObject();
    w.Key("id");
    w.Uint64(record.id);
    w.Key("activity");
    w.String(activity.activity);
    w.Key("tensor");
    w.StartObject();
    w.Key("name");
    String(w, activity.tensor.name);
    w.Key("data");
    String(w, TensorData(activity.tensor));
    w.Key("shape");
    String(w, StrJoin(activity.tensor.shape, ","));
    w.Key("dtype");
    String(w, DataTypeName(activity.tensor.dtype));
    w.EndObject();
    w.EndObject();
    flush();
  }
  return out;
}

void TraceFileWriter::Write(const TritonTraceRecord& record) {
  const int64_t frequency = record.log_frequency;
  if (fd_ >= 0 && !fd_indexed_ && frequency > 0) CloseFile();  // from one file to indexed ones
  if (fd_ < 0) {
    const bool plain = frequency == 0 && !plain_used_;
    const std::string path = plain ? options_.path : StrCat(options_.path, ".", next_index_);
    // O_NOFOLLOW: a link planted where the file goes is refused, not followed.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (fd < 0) {
      if (failed_path_ != path) {
        INFERA_LOG(ERROR) << "trace file '" << path << "' cannot be opened (" << std::strerror(errno)
                          << "); traces are dropped";
        failed_path_ = path;
      }
      if (!plain) ++next_index_;  // the next file gets the next name, not this one again
      dropped_.fetch_add(1);
      return;
    }
    fd_ = fd;
    fd_indexed_ = !plain;
    if (plain) {
      plain_used_ = true;
    } else {
      ++next_index_;
    }
    in_file_ = 0;
  }
  std::string bytes = in_file_ == 0 ? "[" : ",\n";
  bytes += FormatTrace(record);
  if (!WriteAll(fd_, bytes)) {
    dropped_.fetch_add(1);
    return;
  }
  ++in_file_;
  written_.fetch_add(1);
  if (fd_indexed_ && frequency > 0 && in_file_ >= frequency) CloseFile();
}

void TraceFileWriter::CloseFile() {
  if (fd_ < 0) return;
  WriteAll(fd_, in_file_ == 0 ? "[]\n" : "]\n");
  ::close(fd_);
  fd_ = -1;
}

}  // namespace infera
