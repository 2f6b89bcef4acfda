// GgufBuilder: writes GGUF bytes in memory for the reader's tests (test-only header),
// including files a correct writer would never produce (wrong counts, offsets,
// alignments), so each hostile case is one line away from a valid file.
#ifndef INFERA_GGUF_TEST_GGUF_BUILDER_H_
#define INFERA_GGUF_TEST_GGUF_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace infera::gguf::testing {

class GgufBuilder {
 public:
  // Appenders for raw little-endian values.
  static void PutU8(std::string& s, uint8_t v) { s.push_back(static_cast<char>(v)); }
  static void PutU32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
  static void PutU64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
  static void PutF32(std::string& s, float v) { s.append(reinterpret_cast<const char*>(&v), 4); }
  static void PutString(std::string& s, const std::string& text) {
    PutU64(s, text.size());
    s += text;
  }

  // A metadata pair whose value bytes (type id included) the caller wrote.
  GgufBuilder& RawKv(const std::string& key, const std::string& typed_value) {
    std::string kv;
    PutString(kv, key);
    kv += typed_value;
    kvs_.push_back(kv);
    return *this;
  }
  GgufBuilder& U32(const std::string& key, uint32_t v) {
    std::string t;
    PutU32(t, 4);
    PutU32(t, v);
    return RawKv(key, t);
  }
  GgufBuilder& I32(const std::string& key, int32_t v) {
    std::string t;
    PutU32(t, 5);
    PutU32(t, static_cast<uint32_t>(v));
    return RawKv(key, t);
  }
  GgufBuilder& U64(const std::string& key, uint64_t v) {
    std::string t;
    PutU32(t, 10);
    PutU64(t, v);
    return RawKv(key, t);
  }
  GgufBuilder& F32(const std::string& key, float v) {
    std::string t;
    PutU32(t, 6);
    PutF32(t, v);
    return RawKv(key, t);
  }
  GgufBuilder& Bool(const std::string& key, bool v) {
    std::string t;
    PutU32(t, 7);
    PutU8(t, v ? 1 : 0);
    return RawKv(key, t);
  }
  GgufBuilder& Str(const std::string& key, const std::string& v) {
    std::string t;
    PutU32(t, 8);
    PutString(t, v);
    return RawKv(key, t);
  }
  GgufBuilder& StrArray(const std::string& key, const std::vector<std::string>& v) {
    std::string t;
    PutU32(t, 9);
    PutU32(t, 8);
    PutU64(t, v.size());
    for (const auto& s : v) PutString(t, s);
    return RawKv(key, t);
  }
  GgufBuilder& I32Array(const std::string& key, const std::vector<int32_t>& v) {
    std::string t;
    PutU32(t, 9);
    PutU32(t, 5);
    PutU64(t, v.size());
    for (int32_t x : v) PutU32(t, static_cast<uint32_t>(x));
    return RawKv(key, t);
  }
  GgufBuilder& F32Array(const std::string& key, const std::vector<float>& v) {
    std::string t;
    PutU32(t, 9);
    PutU32(t, 6);
    PutU64(t, v.size());
    for (float x : v) PutF32(t, x);
    return RawKv(key, t);
  }

  // A tensor: dims in file order (dims[0] fastest), `num_bytes` of data (a byte
  // pattern) placed at the next aligned offset, or the info's offset forced.
  GgufBuilder& Tensor(const std::string& name, uint32_t type, std::vector<uint64_t> dims, uint64_t num_bytes,
                      std::optional<uint64_t> forced_offset = std::nullopt) {
    tensors_.push_back({name, type, std::move(dims), num_bytes, forced_offset, std::nullopt});
    return *this;
  }

  // A tensor holding `data` (its bytes as given), placed at the next aligned offset.
  GgufBuilder& TensorData(const std::string& name, uint32_t type, std::vector<uint64_t> dims, std::string data) {
    tensors_.push_back({name, type, std::move(dims), data.size(), std::nullopt, std::move(data)});
    return *this;
  }

  GgufBuilder& Version(uint32_t v) { version_ = v; return *this; }
  GgufBuilder& Alignment(uint32_t a) { alignment_ = a; return *this; }  // data layout only
  GgufBuilder& TensorCount(uint64_t n) { tensor_count_ = n; return *this; }
  GgufBuilder& KvCount(uint64_t n) { kv_count_ = n; return *this; }

  std::string Build() const {
    std::string s = "GGUF";
    PutU32(s, version_);
    PutU64(s, tensor_count_.value_or(tensors_.size()));
    PutU64(s, kv_count_.value_or(kvs_.size()));
    for (const auto& kv : kvs_) s += kv;
    std::vector<uint64_t> offsets;
    uint64_t next = 0;
    for (const auto& t : tensors_) {
      offsets.push_back(next);
      next = (next + t.num_bytes + alignment_ - 1) / alignment_ * alignment_;
    }
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const auto& t = tensors_[i];
      PutString(s, t.name);
      PutU32(s, static_cast<uint32_t>(t.dims.size()));
      for (uint64_t d : t.dims) PutU64(s, d);
      PutU32(s, t.type);
      PutU64(s, t.forced_offset.value_or(offsets[i]));
    }
    if (tensors_.empty()) return s;
    s.resize((s.size() + alignment_ - 1) / alignment_ * alignment_, '\0');
    const size_t data_start = s.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      s.resize(data_start + offsets[i], '\0');
      if (tensors_[i].data) {
        s += *tensors_[i].data;
        continue;
      }
      for (uint64_t b = 0; b < tensors_[i].num_bytes; ++b) s.push_back(static_cast<char>((i * 31 + b) & 0xFF));
    }
    return s;
  }

 private:
  struct TensorSpec {
    std::string name;
    uint32_t type;
    std::vector<uint64_t> dims;
    uint64_t num_bytes;
    std::optional<uint64_t> forced_offset;
    std::optional<std::string> data;  // else a byte pattern
  };
  uint32_t version_ = 3;
  uint32_t alignment_ = 32;
  std::optional<uint64_t> tensor_count_, kv_count_;
  std::vector<std::string> kvs_;
  std::vector<TensorSpec> tensors_;
};

}  // namespace infera::gguf::testing

#endif  // INFERA_GGUF_TEST_GGUF_BUILDER_H_
