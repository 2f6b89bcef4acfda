#include "llm/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "common/status.h"
#include "common/str_cat.h"
#include "llm/text_imports.h"

namespace infera::llm {
namespace {

std::optional<WeightType> ParseWeightType(std::string_view name) {
  if (name == "F32") return WeightType::kF32;
  if (name == "F16") return WeightType::kF16;
  if (name == "BF16") return WeightType::kBF16;
  return std::nullopt;
}

}  // namespace

std::string_view WeightTypeName(WeightType type) {
  switch (type) {
    case WeightType::kF32: return "F32";
    case WeightType::kF16: return "F16";
    case WeightType::kBF16: return "BF16";
  }
  return "?";
}

size_t WeightTypeSize(WeightType type) { return type == WeightType::kF32 ? 4 : 2; }

int64_t TensorView::NumElements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_) munmap(mapping_, mapping_size_);
}

absl::StatusOr<std::unique_ptr<SafetensorsFile>> SafetensorsFile::Open(
    const std::filesystem::path& path) {
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->path_ = path;
  const std::string where = path.string();
  int fd = ::open(where.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("cannot open ", where, ": ", std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size < 8) {
    ::close(fd);
    return absl::InvalidArgumentError(StrCat(where, ": not a safetensors file (too short)"));
  }
  file->mapping_size_ = static_cast<size_t>(st.st_size);
  void* mapping = mmap(nullptr, file->mapping_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping == MAP_FAILED) return absl::InternalError(StrCat("cannot map ", where));
  file->mapping_ = mapping;
  const auto* bytes = static_cast<const uint8_t*>(mapping);

  uint64_t header_len = 0;
  std::memcpy(&header_len, bytes, 8);  // little-endian on every platform we build for
  if (header_len > file->mapping_size_ - 8) {
    return absl::InvalidArgumentError(
        StrCat(where, ": header length ", header_len, " runs past the end of the file"));
  }
  rapidjson::Document header;
  RETURN_IF_ERROR(ParseJson(std::string_view(reinterpret_cast<const char*>(bytes + 8), header_len),
                            StrCat(where, " header"), header));
  if (!header.IsObject()) return absl::InvalidArgumentError(StrCat(where, ": header is not an object"));
  const uint8_t* data = bytes + 8 + header_len;
  const size_t data_size = file->mapping_size_ - 8 - header_len;
  for (auto it = header.MemberBegin(); it != header.MemberEnd(); ++it) {
    std::string name(AsView(it->name));
    if (name == "__metadata__") continue;
    const rapidjson::Value& info = it->value;
    auto dtype_name = GetString(info, "dtype");
    const rapidjson::Value* shape = FindMember(info, "shape");
    const rapidjson::Value* offsets = FindMember(info, "data_offsets");
    if (!dtype_name || !shape || !shape->IsArray() || !offsets || !offsets->IsArray() ||
        offsets->Size() != 2 || !(*offsets)[0].IsUint64() || !(*offsets)[1].IsUint64()) {
      return absl::InvalidArgumentError(StrCat(where, ": tensor '", name, "' has a malformed entry"));
    }
    auto dtype = ParseWeightType(*dtype_name);
    if (!dtype) {
      return absl::InvalidArgumentError(StrCat(where, ": tensor '", name, "' has dtype ", *dtype_name,
                                               "; supported: F32, F16, BF16"));
    }
    TensorView view;
    view.dtype = *dtype;
    for (const auto& d : shape->GetArray()) {
      if (!d.IsInt64() || d.GetInt64() < 0) {
        return absl::InvalidArgumentError(StrCat(where, ": tensor '", name, "' has a bad shape"));
      }
      view.shape.push_back(d.GetInt64());
    }
    const uint64_t begin = (*offsets)[0].GetUint64(), end = (*offsets)[1].GetUint64();
    if (begin > end || end > data_size ||
        end - begin != static_cast<uint64_t>(view.NumElements()) * WeightTypeSize(view.dtype)) {
      return absl::InvalidArgumentError(StrCat(where, ": tensor '", name, "' data_offsets [", begin,
                                               ", ", end, ") do not fit its shape or the file"));
    }
    view.data = data + begin;
    view.num_bytes = end - begin;
    file->tensors_.emplace(std::move(name), std::move(view));
  }
  return file;
}

absl::StatusOr<std::unique_ptr<SafetensorsModel>> SafetensorsModel::Open(
    const std::filesystem::path& dir) {
  auto model = std::make_unique<SafetensorsModel>();
  model->dir_ = dir;
  std::vector<std::string> shard_names;
  const std::filesystem::path index_path = dir / "model.safetensors.index.json";
  if (std::filesystem::exists(index_path)) {
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(index_path));
    rapidjson::Document index;
    RETURN_IF_ERROR(ParseJson(text, index_path.string(), index));
    const rapidjson::Value* map = FindMember(index, "weight_map");
    if (!map || !map->IsObject()) {
      return absl::InvalidArgumentError(StrCat(index_path.string(), ": no \"weight_map\" object"));
    }
    for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
      if (!it->value.IsString()) {
        return absl::InvalidArgumentError(StrCat(index_path.string(), ": weight_map values must be file names"));
      }
      std::string shard(AsView(it->value));
      if (shard.find('/') != std::string::npos || shard == "..") {
        return absl::InvalidArgumentError(StrCat(index_path.string(), ": bad shard name '", shard, "'"));
      }
      bool seen = false;
      for (const auto& s : shard_names) seen = seen || s == shard;
      if (!seen) shard_names.push_back(shard);
    }
  } else if (std::filesystem::exists(dir / "model.safetensors")) {
    shard_names.push_back("model.safetensors");
  } else {
    return absl::NotFoundError(StrCat("no model.safetensors or model.safetensors.index.json in ",
                                      dir.string()));
  }
  for (const std::string& shard : shard_names) {
    ASSIGN_OR_RETURN(auto file, SafetensorsFile::Open(dir / shard));
    for (const auto& [name, view] : file->tensors()) {
      if (!model->index_.emplace(name, &view).second) {
        return absl::InvalidArgumentError(StrCat("tensor '", name, "' appears in two shards in ", dir.string()));
      }
    }
    model->files_.push_back(std::move(file));
  }
  return model;
}

absl::StatusOr<TensorView> SafetensorsModel::Get(std::string_view name) const {
  auto it = index_.find(name);
  if (it == index_.end()) {
    return absl::NotFoundError(StrCat("weight '", name, "' is missing from ", dir_.string()));
  }
  return *it->second;
}

bool SafetensorsModel::Has(std::string_view name) const { return index_.count(name) > 0; }

std::vector<std::string> SafetensorsModel::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, view] : index_) names.push_back(name);
  return names;
}

}  // namespace infera::llm
