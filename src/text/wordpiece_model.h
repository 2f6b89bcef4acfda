// WordPieceModel: the WordPiece model of a tokenizer.json ("model": {"type":
// "WordPiece"}), as BERT-style encoders use.
//
// Encode() turns one pre-tokenized word into sub-word ids by greedy longest-match-first
// (Hugging Face's and Google's BERT algorithm): from the start of the word, the longest
// vocabulary entry that matches is taken, and the rest of the word is matched the same
// way with `continuing_subword_prefix` ("##") prepended. A word with a part no entry
// matches, or longer than `max_input_chars_per_word` code points, is one `unk_token`.
//
// Load errors: a vocab that is not an object of non-negative ids below the number of
// entries (ids are dense in every real vocab; a hostile id cannot make the table huge),
// an unk_token missing from the vocab.
//
// Thread-safe after construction (const).
//
// Usage:
//   ASSIGN_OR_RETURN(WordPieceModel wp, WordPieceModel::FromJson(doc["model"]));
//   std::vector<int32_t> ids;
//   wp.Encode("unaffable", ids);  // un ##aff ##able
#ifndef INFERA_TEXT_WORDPIECE_MODEL_H_
#define INFERA_TEXT_WORDPIECE_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace infera::text {

class WordPieceModel {
 public:
  static absl::StatusOr<WordPieceModel> FromJson(const rapidjson::Value& model);

  // Appends the ids of `word` (one pre-tokenized piece, valid UTF-8) to `ids`.
  void Encode(std::string_view word, std::vector<int32_t>& ids) const;

  std::optional<int32_t> TokenToId(std::string_view token) const;
  int32_t vocab_size() const { return static_cast<int32_t>(id_to_token_.size()); }
  // The vocabulary string of `id` (empty when the model has no such id).
  const std::string& IdToToken(int32_t id) const;
  const std::string& continuing_subword_prefix() const { return prefix_; }
  int32_t unk_id() const { return unk_id_; }

 private:
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> id_to_token_;
  std::string prefix_ = "##";
  int32_t unk_id_ = 0;
  size_t max_input_chars_per_word_ = 100;
  size_t max_token_bytes_ = 0;  // longest vocabulary entry
};

}  // namespace infera::text

#endif  // INFERA_TEXT_WORDPIECE_MODEL_H_
