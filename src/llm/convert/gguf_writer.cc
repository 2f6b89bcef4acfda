#include "llm/convert/gguf_writer.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "common/status.h"
#include "common/str_cat.h"
#include "llm/convert/atomic_file.h"

namespace infera::llm::convert {
namespace {

// GGUF value type ids (gguf/gguf_value.h).
constexpr uint32_t kUint32 = 4, kInt32 = 5, kFloat32 = 6, kBool = 7, kString = 8, kArray = 9;

template <typename T>
void Put(std::string& s, T v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof(v));
}
void PutString(std::string& s, std::string_view text) {
  Put<uint64_t>(s, text.size());
  s.append(text);
}
uint64_t Padding(uint64_t offset) { return (kAlignment - offset % kAlignment) % kAlignment; }


}  // namespace

GgufWriter::GgufWriter() { AddUint32("general.alignment", kAlignment); }

void GgufWriter::Key(std::string_view key, uint32_t value_type) {
  PutString(kv_, key);
  Put<uint32_t>(kv_, value_type);
  keys_.emplace_back(key);
  ++kv_count_;
}
bool GgufWriter::HasKey(std::string_view key) const {
  return std::find(keys_.begin(), keys_.end(), key) != keys_.end();
}
void GgufWriter::AddString(std::string_view key, std::string_view value) {
  Key(key, kString);
  PutString(kv_, value);
}
void GgufWriter::AddUint32(std::string_view key, uint32_t value) {
  Key(key, kUint32);
  Put(kv_, value);
}
void GgufWriter::AddInt32(std::string_view key, int32_t value) {
  Key(key, kInt32);
  Put(kv_, value);
}
void GgufWriter::AddFloat32(std::string_view key, float value) {
  Key(key, kFloat32);
  Put(kv_, value);
}
void GgufWriter::AddBool(std::string_view key, bool value) {
  Key(key, kBool);
  Put<uint8_t>(kv_, value ? 1 : 0);
}
void GgufWriter::AddStringArray(std::string_view key, const std::vector<std::string>& values) {
  Key(key, kArray);
  Put<uint32_t>(kv_, kString);
  Put<uint64_t>(kv_, values.size());
  for (const std::string& v : values) PutString(kv_, v);
}
void GgufWriter::AddInt32Array(std::string_view key, const std::vector<int32_t>& values) {
  Key(key, kArray);
  Put<uint32_t>(kv_, kInt32);
  Put<uint64_t>(kv_, values.size());
  for (int32_t v : values) Put(kv_, v);
}
void GgufWriter::AddFloat32Array(std::string_view key, const std::vector<float>& values) {
  Key(key, kArray);
  Put<uint32_t>(kv_, kFloat32);
  Put<uint64_t>(kv_, values.size());
  for (float v : values) Put(kv_, v);
}

void GgufWriter::AddTensor(std::string_view name, quant::BlockType type, std::vector<int64_t> dims,
                           uint64_t num_bytes) {
  tensors_.push_back({std::string(name), type, std::move(dims), num_bytes});
}

absl::Status GgufWriter::Write(const std::filesystem::path& path, bool overwrite,
                               const std::function<absl::Status(size_t, TensorSink&)>& produce,
                               const std::function<absl::Status(const std::filesystem::path&)>& verify) const {
  std::string header;
  header.append("GGUF");
  Put<uint32_t>(header, 3);
  Put<uint64_t>(header, tensors_.size());
  Put<uint64_t>(header, kv_count_);
  header += kv_;
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    PutString(header, t.name);
    Put<uint32_t>(header, static_cast<uint32_t>(t.dims.size()));
    for (int64_t d : t.dims) Put<uint64_t>(header, static_cast<uint64_t>(d));
    Put<uint32_t>(header, static_cast<uint32_t>(t.type));
    Put<uint64_t>(header, offset);
    offset += t.num_bytes + Padding(t.num_bytes);
  }
  header.append(Padding(header.size()), '\0');

  ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path, overwrite));
  RETURN_IF_ERROR(file->Write(header.data(), header.size()));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    CountingFileSink sink(*file);
    RETURN_IF_ERROR(produce(i, sink));
    if (sink.written != tensors_[i].num_bytes) {
      return absl::InternalError(StrCat("tensor '", tensors_[i].name, "': wrote ", sink.written, " bytes, declared ",
                                        tensors_[i].num_bytes));
    }
    RETURN_IF_ERROR(file->WriteZeros(Padding(tensors_[i].num_bytes)));
  }
  RETURN_IF_ERROR(file->Close());
  if (verify) RETURN_IF_ERROR(verify(file->temp_path()));
  return file->Commit();
}

}  // namespace infera::llm::convert
