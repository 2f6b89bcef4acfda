// GgufFile: a GGUF model file (versions 2 and 3, little-endian), memory-mapped read-only
// or copied onto huge pages (GgufResidency), and validated: its metadata
// (gguf_metadata.h) and its tensors, each a view {ggml type, dims, data pointer, byte
// size} into those bytes.
//
// Layout (the GGUF specification): "GGUF" magic, uint32 version, uint64 tensor count,
// uint64 metadata count; the metadata key/value pairs (uint64-length-prefixed key,
// uint32 value type, value); the tensor infos (name, uint32 n_dims, n_dims × uint64
// dims, uint32 ggml type, uint64 offset); padding to `general.alignment` (default 32);
// the data section, where each tensor starts at its offset (a multiple of the
// alignment). Version 2 has the same layout; version 1 (32-bit counts) and big-endian
// files are refused.
//
// Validation (docs/gguf.md, "What is validated"): every read is bounds-checked; counts,
// string lengths and array lengths must fit in the bytes left; arrays nest at most
// kMaxArrayNesting deep; keys and tensor names are unique; `general.alignment` is a
// uint32 power of two; n_dims <= 4; every dimension and the element count fit int64;
// the first dimension is a multiple of the type's block size; the type id is known
// (ggml_type.h); every tensor's offset is aligned and its bytes lie inside the file. All
// arithmetic on file values is overflow-checked. Every error is an InvalidArgument
// naming the file, the field or tensor, and the byte offset.
//
// Thread-safe after construction (read-only). Views stay valid while the file lives.
//
// Usage:
//   ASSIGN_OR_RETURN(auto file, GgufFile::Open(path));
//   ASSIGN_OR_RETURN(std::string_view arch, file->metadata().GetString("general.architecture"));
//   ASSIGN_OR_RETURN(const GgufTensor* w, file->GetTensor("token_embd.weight"));
#ifndef INFERA_GGUF_GGUF_FILE_H_
#define INFERA_GGUF_GGUF_FILE_H_

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/huge_page_buffer.h"
#include "gguf/ggml_type.h"
#include "gguf/gguf_metadata.h"

namespace infera::gguf {

class ByteCursor;

inline constexpr uint32_t kDefaultAlignment = 32;
inline constexpr uint32_t kMaxDims = 4;
inline constexpr int kMaxArrayNesting = 8;   // an array inside an array counts 2
inline constexpr size_t kMaxKeyBytes = 65535;
inline constexpr size_t kMaxTensorNameBytes = 64;

// How Open() holds the file's bytes.
enum class GgufResidency {
  // A read-only mmap of the file: pages come from the page cache on first touch and are
  // shared with every process that maps the same file. For readers of the metadata
  // (tokenizer, chat template, `infera llm convert`) and the `use_mmap: "true"` option.
  kMapped,
  // A private, read-only copy in anonymous memory on 2 MiB transparent huge pages where
  // the kernel's THP mode allows (always or madvise). The runner's weights: a decode
  // step streams every weight, and the page cache's 4 KiB pages cost a TLB miss and a
  // restarted hardware prefetch every 4 KiB (docs/gguf.md, "Weights in memory").
  kHugePageCopy,
};

struct GgufTensor {
  std::string name;
  GgmlType type = GgmlType::kF32;
  // As in the file: dims[0] varies fastest (ggml's ne[0], the row length). A row-major
  // (PyTorch / safetensors) shape is these reversed: see RowMajorShape().
  std::vector<int64_t> dims;
  const uint8_t* data = nullptr;  // inside the mapping, aligned to the file's alignment
  uint64_t num_bytes = 0;
  uint64_t file_offset = 0;  // of data, from the start of the file

  int64_t NumElements() const;
  std::vector<int64_t> RowMajorShape() const { return {dims.rbegin(), dims.rend()}; }
};

class GgufFile {
 public:
  // Maps or copies (`residency`) and validates `path`. NotFound when it cannot be
  // opened; ResourceExhausted when the copy cannot be allocated; InvalidArgument naming
  // the problem otherwise.
  static absl::StatusOr<std::unique_ptr<GgufFile>> Open(const std::filesystem::path& path,
                                                        GgufResidency residency = GgufResidency::kMapped);
  // Validates bytes the caller keeps alive for the file's lifetime (tests, fuzzing).
  // `where` names them in errors.
  static absl::StatusOr<std::unique_ptr<GgufFile>> FromBytes(const uint8_t* data, size_t size,
                                                             std::string_view where);
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  uint32_t version() const { return version_; }
  uint32_t alignment() const { return alignment_; }
  // Where the data section starts, from the start of the file.
  uint64_t data_offset() const { return data_offset_; }
  uint64_t file_size() const { return size_; }
  const std::string& where() const { return where_; }

  const GgufMetadata& metadata() const { return metadata_; }
  // Frees the metadata (metadata() is empty afterwards); the tensors stay. For a holder
  // that keeps the file only for its tensors' bytes: a 128 k-token vocabulary's arrays
  // (tokens, merges, token types) parse into about 25 MB that would otherwise stay
  // resident for the model's life.
  void ReleaseMetadata() { metadata_ = GgufMetadata(); }
  // In file order.
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* FindTensor(std::string_view name) const;
  // NotFound naming the tensor and the file.
  absl::StatusOr<const GgufTensor*> GetTensor(std::string_view name) const;

 private:
  GgufFile() = default;
  absl::Status Parse();
  absl::Status ParseTensorInfo(ByteCursor& cursor, uint64_t index);
  absl::Status PlaceTensors(uint64_t infos_end);

  std::string where_;
  void* mapping_ = nullptr;               // owned when Open() mapped the file (kMapped)
  std::optional<HugePageBuffer> copy_;   // kHugePageCopy
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint32_t alignment_ = kDefaultAlignment;
  uint64_t data_offset_ = 0;
  GgufMetadata metadata_;
  std::vector<GgufTensor> tensors_;
  std::vector<uint64_t> relative_offsets_;  // per tensor, as in the file
  std::map<std::string, size_t, std::less<>> by_name_;
};

}  // namespace infera::gguf

#endif  // INFERA_GGUF_GGUF_FILE_H_
