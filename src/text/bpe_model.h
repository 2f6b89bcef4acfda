// BpeModel: the byte-pair-encoding model of a tokenizer.json ("model": {"type": "BPE"}).
//
// Encode() splits one pre-tokenized piece into its characters and applies merges in rank
// order (lowest rank first, leftmost first among equals) with a heap, as Hugging Face's
// tokenizers do, so long pieces (SentencePiece-style input is one piece per segment) cost
// O(n log n). Characters missing from the vocabulary become <0xXX> byte tokens when
// `byte_fallback` is set, else the unknown token (consecutive ones fused when
// `fuse_unk`). `ignore_merges` (Llama-3): a piece that is itself a vocabulary entry is
// emitted whole.
//
// Thread-safe after construction (const).
#ifndef INFERA_TEXT_BPE_MODEL_H_
#define INFERA_TEXT_BPE_MODEL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"
#include "text/vocabulary.h"

namespace infera::text {

class BpeModel {
 public:
  static absl::StatusOr<BpeModel> FromJson(const rapidjson::Value& model);

  // Appends the ids of `piece` to `ids`.
  void Encode(std::string_view piece, std::vector<int32_t>& ids) const;

  std::optional<int32_t> TokenToId(std::string_view token) const;
  // Highest id + 1 of the model's vocabulary (added tokens may extend it).
  int32_t vocab_size() const { return vocab_->size(); }
  // The vocabulary string of `id` (empty when the model has no such id).
  std::string_view IdToToken(int32_t id) const { return vocab_->Token(id); }
  bool byte_fallback() const { return byte_fallback_; }
  // The longest vocabulary entry, in bytes.
  size_t max_token_bytes() const { return vocab_->max_token_bytes(); }
  // True when every character Encode() can meet becomes at least one id: byte fallback
  // has all 256 byte tokens, or there is an unknown token and fuse_unk is off. (Else a
  // character can vanish, or one unknown id can stand for any number of them.)
  // `byte_level`: pieces come in the GPT-2 byte alphabet only; then it is enough that the
  // vocabulary has all 256 of its characters.
  bool EncodesEveryCharacter(bool byte_level) const;
  // For <0xXX> tokens: the byte value; else -1.
  int ByteFallbackValue(int32_t id) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t merged_id;
  };
  static uint64_t PairKey(int32_t a, int32_t b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }
  void AppendSymbol(std::string_view ch, std::vector<int32_t>& symbols) const;

  // Behind a pointer: the vocabulary cannot move (vocabulary.h), the model can.
  std::unique_ptr<Vocabulary> vocab_ = std::make_unique<Vocabulary>();
  absl::flat_hash_map<uint64_t, Merge> merges_;  // 16 bytes a slot, no node per merge
  int32_t unk_id_ = -1;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;
  int32_t byte_ids_[256];
};

}  // namespace infera::text

#endif  // INFERA_TEXT_BPE_MODEL_H_
