#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "common/checked_math.h"
#include "common/huge_page_buffer.h"
#include "common/read_fully.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "gguf/byte_cursor.h"
#include "gguf/gguf_value_reader.h"

namespace infera::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr uint64_t kHeaderBytes = 4 + 4 + 8 + 8;
// The fewest bytes one metadata pair / tensor info can take: a key of 1 byte (8 + 1),
// a value type (4) and a 1-byte value; a name of 1 byte (8 + 1), n_dims (4) with no
// dims, a type (4) and an offset (8).
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 4 + 8;

uint32_t ByteSwap32(uint32_t v) { return __builtin_bswap32(v); }

// `value` rounded up to a multiple of `alignment` (a power of two), or nullopt on overflow.
std::optional<uint64_t> AlignUp(uint64_t value, uint64_t alignment) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(value, alignment - 1, &sum)) return std::nullopt;
  return sum & ~(alignment - 1);
}

// pread's size: one call of 1 GiB into fresh huge-page memory took 1.5-3.4 s for the
// 1.3 GB Q8_0 file against 0.5-0.7 s in 16 MiB calls (the pages are faulted in as the
// copy reaches them either way).
constexpr size_t kReadChunkBytes = size_t{16} << 20;

// Reads the first `size` bytes of `fd` into `dst`.
absl::Status ReadAll(int fd, uint8_t* dst, size_t size, const std::string& where) {
  const ReadFullyResult r = ReadFully(fd, dst, size, 0, kReadChunkBytes);
  if (r.error != 0) return absl::InternalError(StrCat("cannot read ", where, ": ", std::strerror(r.error)));
  if (r.done < size) {
    return absl::InvalidArgumentError(
        StrCat(where, ": the file ended at byte ", r.done, " while it was read (", size, " bytes expected)"));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t GgufTensor::NumElements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // checked when the file was parsed
  return n;
}

GgufFile::~GgufFile() {
  if (mapping_ != nullptr) munmap(mapping_, size_);
}

absl::StatusOr<std::unique_ptr<GgufFile>> GgufFile::Open(const std::filesystem::path& path,
                                                         GgufResidency residency) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->where_ = path.string();
  const int fd = ::open(file->where_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::NotFoundError(StrCat("cannot open ", file->where_, ": ", std::strerror(errno)));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::InternalError(StrCat("cannot stat ", file->where_, ": ", std::strerror(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(StrCat(file->where_, ": not a regular file"));
  }
  if (static_cast<uint64_t>(st.st_size) < kHeaderBytes) {
    ::close(fd);
    return absl::InvalidArgumentError(StrCat(file->where_, ": not a GGUF file (", st.st_size,
                                             " bytes, shorter than the 24-byte header)"));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (residency == GgufResidency::kMapped) {
    void* mapping = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (mapping == MAP_FAILED) {
      return absl::InternalError(StrCat("cannot map ", file->where_, ": ", std::strerror(err)));
    }
    file->mapping_ = mapping;
    file->data_ = static_cast<const uint8_t*>(mapping);
  } else {
    std::optional<HugePageBuffer> copy = HugePageBuffer::Allocate(size);
    if (!copy) {
      const int err = errno;
      ::close(fd);
      return absl::ResourceExhaustedError(
          StrCat("cannot allocate ", size, " bytes to hold ", file->where_, ": ", std::strerror(err)));
    }
    const absl::Status read = ReadAll(fd, copy->data(), size, file->where_);
    ::close(fd);
    RETURN_IF_ERROR(read);
    copy->MakeReadOnly();  // immutable from here, as the file mapping is
    file->data_ = copy->data();
    file->copy_ = std::move(copy);
  }
  file->size_ = size;
  RETURN_IF_ERROR(file->Parse());
  return file;
}

absl::StatusOr<std::unique_ptr<GgufFile>> GgufFile::FromBytes(const uint8_t* data, size_t size,
                                                              std::string_view where) {
  std::unique_ptr<GgufFile> file(new GgufFile());
  file->where_ = std::string(where);
  file->data_ = data;
  file->size_ = size;
  RETURN_IF_ERROR(file->Parse());
  return file;
}

absl::Status GgufFile::Parse() {
  ByteCursor cursor(data_, size_, where_);
  if (size_ < kHeaderBytes) {
    return absl::InvalidArgumentError(
        StrCat(where_, ": not a GGUF file (", size_, " bytes, shorter than the 24-byte header)"));
  }
  ASSIGN_OR_RETURN(uint32_t magic, cursor.Read<uint32_t>("magic"));
  if (magic != kMagic) {
    return absl::InvalidArgumentError(StrCat(where_, ": not a GGUF file (bad magic at byte 0: expected \"GGUF\")"));
  }
  ASSIGN_OR_RETURN(version_, cursor.Read<uint32_t>("version"));
  if (version_ != 2 && version_ != 3) {
    if (ByteSwap32(version_) == 2 || ByteSwap32(version_) == 3) {
      return absl::InvalidArgumentError(StrCat(where_, ": big-endian GGUF files are not supported"));
    }
    if (version_ == 1) {
      return absl::InvalidArgumentError(
          StrCat(where_, ": GGUF version 1 is not supported (32-bit counts); convert the model again"));
    }
    return absl::InvalidArgumentError(
        StrCat(where_, ": unsupported GGUF version ", version_, " at byte 4 (supported: 2, 3)"));
  }
  ASSIGN_OR_RETURN(uint64_t tensor_count, cursor.Read<uint64_t>("tensor count"));
  ASSIGN_OR_RETURN(uint64_t kv_count, cursor.Read<uint64_t>("metadata count"));
  // Both counts must fit in what is left, each entry at its smallest: refuses a count of
  // 2^60 before anything is reserved for it.
  const uint64_t left = cursor.remaining();
  if (kv_count > left / kMinKvBytes) {
    return absl::InvalidArgumentError(StrCat(where_, ": metadata count ", kv_count, " at byte 16 cannot fit in a ",
                                             size_, "-byte file"));
  }
  if (tensor_count > (left - kv_count * kMinKvBytes) / kMinTensorInfoBytes) {
    return absl::InvalidArgumentError(StrCat(where_, ": tensor count ", tensor_count,
                                             " at byte 8 cannot fit in a ", size_, "-byte file"));
  }

  for (uint64_t i = 0; i < kv_count; ++i) {
    const size_t key_at = cursor.pos();
    ASSIGN_OR_RETURN(std::string_view key, ReadGgufString(cursor, StrCat("metadata key #", i)));
    if (key.empty() || key.size() > kMaxKeyBytes) {
      return absl::InvalidArgumentError(StrCat(where_, ": metadata key #", i, " at byte ", key_at, " has length ",
                                               key.size(), " (allowed: 1 to ", kMaxKeyBytes, ")"));
    }
    ASSIGN_OR_RETURN(GgufValue value, ReadGgufTypedValue(cursor, StrCat("metadata '", key, "'")));
    if (!metadata_.Insert(key, std::move(value))) {
      return absl::InvalidArgumentError(
          StrCat(where_, ": metadata key '", key, "' at byte ", key_at, " appears twice"));
    }
  }
  if (const GgufValue* alignment = metadata_.Find("general.alignment")) {
    if (alignment->type() != GgufValueType::kUint32) {
      return absl::InvalidArgumentError(StrCat(where_, ": general.alignment is ",
                                               GgufValueTypeName(alignment->type()), ", expected uint32"));
    }
    const uint64_t a = alignment->AsUint();
    if (a == 0 || (a & (a - 1)) != 0) {
      return absl::InvalidArgumentError(
          StrCat(where_, ": general.alignment ", a, " is not a power of two"));
    }
    alignment_ = static_cast<uint32_t>(a);
  }

  tensors_.reserve(tensor_count);
  relative_offsets_.reserve(tensor_count);
  for (uint64_t i = 0; i < tensor_count; ++i) RETURN_IF_ERROR(ParseTensorInfo(cursor, i));
  return PlaceTensors(cursor.pos());
}

absl::Status GgufFile::ParseTensorInfo(ByteCursor& cursor, uint64_t index) {
  const size_t name_at = cursor.pos();
  ASSIGN_OR_RETURN(std::string_view name, ReadGgufString(cursor, StrCat("tensor #", index, " name")));
  if (name.empty() || name.size() > kMaxTensorNameBytes) {
    return absl::InvalidArgumentError(StrCat(where_, ": tensor #", index, " name at byte ", name_at, " has length ",
                                             name.size(), " (allowed: 1 to ", kMaxTensorNameBytes, ")"));
  }
  if (by_name_.count(name) > 0) {
    return absl::InvalidArgumentError(
        StrCat(where_, ": tensor name '", name, "' at byte ", name_at, " appears twice"));
  }
  const std::string field = StrCat("tensor '", name, "'");
  const size_t dims_at = cursor.pos();
  ASSIGN_OR_RETURN(uint32_t n_dims, cursor.Read<uint32_t>(StrCat(field, " n_dims")));
  if (n_dims > kMaxDims) {
    return absl::InvalidArgumentError(
        StrCat(where_, ": ", field, " at byte ", dims_at, ": n_dims ", n_dims, " is more than ", kMaxDims));
  }
  GgufTensor tensor;
  tensor.name = std::string(name);
  int64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const size_t at = cursor.pos();
    ASSIGN_OR_RETURN(uint64_t dim, cursor.Read<uint64_t>(StrCat(field, " dim ", d)));
    std::optional<int64_t> product;
    if (dim <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      product = CheckedMul(elements, static_cast<int64_t>(dim));
    }
    if (!product) {
      return absl::InvalidArgumentError(StrCat(where_, ": ", field, " dim ", d, " at byte ", at, ": ", dim,
                                               " makes the element count overflow"));
    }
    elements = *product;
    tensor.dims.push_back(static_cast<int64_t>(dim));
  }
  const size_t type_at = cursor.pos();
  ASSIGN_OR_RETURN(uint32_t type_id, cursor.Read<uint32_t>(StrCat(field, " type")));
  const GgmlTypeInfo* type = FindGgmlType(type_id);
  if (type == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(where_, ": ", field, " at byte ", type_at, ": unknown ggml type id ", type_id));
  }
  tensor.type = type->type;
  const int64_t row = tensor.dims.empty() ? 1 : tensor.dims[0];
  if (row % type->block_size != 0) {
    return absl::InvalidArgumentError(StrCat(where_, ": ", field, " has first dimension ", row, ", not a multiple of ",
                                             type->name, "'s block size ", type->block_size));
  }
  const std::optional<int64_t> bytes = CheckedMul(elements / type->block_size, type->type_size);
  if (!bytes) {
    return absl::InvalidArgumentError(StrCat(where_, ": ", field, " byte size overflows"));
  }
  tensor.num_bytes = static_cast<uint64_t>(*bytes);
  ASSIGN_OR_RETURN(uint64_t offset, cursor.Read<uint64_t>(StrCat(field, " offset")));
  by_name_.emplace(tensor.name, tensors_.size());
  tensors_.push_back(std::move(tensor));
  relative_offsets_.push_back(offset);
  return absl::OkStatus();
}

absl::Status GgufFile::PlaceTensors(uint64_t infos_end) {
  const std::optional<uint64_t> data_start = AlignUp(infos_end, alignment_);
  if (!data_start) return absl::InvalidArgumentError(StrCat(where_, ": data section start overflows"));
  data_offset_ = *data_start;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    GgufTensor& tensor = tensors_[i];
    const uint64_t offset = relative_offsets_[i];
    if (offset % alignment_ != 0) {
      return absl::InvalidArgumentError(StrCat(where_, ": tensor '", tensor.name, "' offset ", offset,
                                               " is not a multiple of the alignment ", alignment_));
    }
    uint64_t begin = 0, end = 0;
    if (__builtin_add_overflow(data_offset_, offset, &begin) ||
        __builtin_add_overflow(begin, tensor.num_bytes, &end) || end > size_) {
      return absl::InvalidArgumentError(StrCat(where_, ": tensor '", tensor.name, "' data (offset ", offset,
                                               " in the data section at byte ", data_offset_, ", ",
                                               tensor.num_bytes, " bytes) runs past the end of the ", size_,
                                               "-byte file"));
    }
    tensor.file_offset = begin;
    tensor.data = data_ + begin;
  }
  return absl::OkStatus();
}

const GgufTensor* GgufFile::FindTensor(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

absl::StatusOr<const GgufTensor*> GgufFile::GetTensor(std::string_view name) const {
  const GgufTensor* tensor = FindTensor(name);
  if (tensor == nullptr) return absl::NotFoundError(StrCat("tensor '", name, "' is missing from ", where_));
  return tensor;
}

}  // namespace infera::gguf
