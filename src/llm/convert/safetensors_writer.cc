#include "llm/convert/safetensors_writer.h"

#include <memory>

#include "common/json_writer.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "llm/convert/atomic_file.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace infera::llm::convert {

void SafetensorsWriter::AddTensor(std::string name, WeightType dtype, std::vector<int64_t> shape) {
  uint64_t n = WeightTypeSize(dtype);
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  tensors_.push_back({std::move(name), dtype, std::move(shape), n});
}

absl::Status SafetensorsWriter::Write(const std::filesystem::path& path, bool overwrite,
                                      const std::function<absl::Status(size_t, TensorSink&)>& produce) const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("__metadata__");
  w.StartObject();
  w.Key("format");
  w.String("pt");
  w.EndObject();
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    WriteString(w, t.name);
    w.StartObject();
    w.Key("dtype");
    WriteString(w, WeightTypeName(t.dtype));
    w.Key("shape");
    w.StartArray();
    for (int64_t d : t.shape) w.Int64(d);
    w.EndArray();
    w.Key("data_offsets");
    w.StartArray();
    w.Uint64(offset);
    w.Uint64(offset + t.num_bytes);
    w.EndArray();
    w.EndObject();
    offset += t.num_bytes;
  }
  w.EndObject();
  std::string header(buffer.GetString(), buffer.GetSize());
  header.append((8 - header.size() % 8) % 8, ' ');
  const uint64_t length = header.size();

  ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> file, AtomicFile::Create(path, overwrite));
  RETURN_IF_ERROR(file->Write(&length, sizeof(length)));
  RETURN_IF_ERROR(file->Write(header.data(), header.size()));
  for (size_t i = 0; i < tensors_.size(); ++i) {
    CountingFileSink sink(*file);
    RETURN_IF_ERROR(produce(i, sink));
    if (sink.written != tensors_[i].num_bytes) {
      return absl::InternalError(StrCat("tensor '", tensors_[i].name, "': wrote ", sink.written, " bytes, declared ",
                                        tensors_[i].num_bytes));
    }
  }
  return file->Commit();
}

}  // namespace infera::llm::convert
