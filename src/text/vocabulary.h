// Vocabulary: a BPE model's token strings and their ids (tokenizer.json "vocab"),
// looked up both ways.
//
// Entries keep the order they were added in. Lookup by string finds the first entry with
// that string (a GGUF vocabulary may repeat a string under two ids); an id names the
// last entry added with it. Ids may leave gaps; Token() of a gap is empty.
//
// Layout, for a 128 k-token vocabulary's memory (docs/llm.md, "Tokenizers", "Memory"):
// the strings packed in one buffer (PackedStrings), each entry's id, each id's entry, and
// a hash set of entry numbers hashed by their strings. By the containers' layouts about
// 3.5 MB at 128 k tokens, where a map of std::string and a vector of std::string took
// about 13 MB.
//
// Not copyable or movable: the set's hash and equality read this object's strings.
// Thread-safe for concurrent reads once built.
#ifndef INFERA_TEXT_VOCABULARY_H_
#define INFERA_TEXT_VOCABULARY_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "text/packed_strings.h"

namespace infera::text {

class Vocabulary {
 public:
  // Ids above this are refused: a hostile "vocab" entry {"x": 2000000000} would
  // otherwise size the id table at 8 GB. Real vocabularies stay below 2^18.
  static constexpr int32_t kMaxId = (1 << 24) - 1;

  Vocabulary() = default;
  Vocabulary(const Vocabulary&) = delete;
  Vocabulary& operator=(const Vocabulary&) = delete;

  // InvalidArgument naming the token for an id outside [0, kMaxId].
  absl::Status Add(std::string_view token, int32_t id);
  // Frees the builder's slack; call once every entry is added (it invalidates the views
  // Token() returned before).
  void Finish();

  std::optional<int32_t> Find(std::string_view token) const;
  bool Contains(std::string_view token) const { return Find(token).has_value(); }
  // Empty for an id no entry names.
  std::string_view Token(int32_t id) const;
  // Highest id + 1.
  int32_t size() const { return static_cast<int32_t>(id_entry_.size()); }
  // The longest token, in bytes.
  size_t max_token_bytes() const { return max_token_bytes_; }

 private:
  static constexpr uint32_t kNoEntry = UINT32_MAX;
  // Hash and equality of entry numbers by their strings, and of a string_view against
  // them (heterogeneous lookup: Find() builds no key).
  struct EntryHash {
    using is_transparent = void;
    const Vocabulary* vocab;
    size_t operator()(uint32_t entry) const { return (*this)(vocab->strings_[entry]); }
    size_t operator()(std::string_view s) const { return absl::Hash<std::string_view>()(s); }
  };
  struct EntryEq {
    using is_transparent = void;
    const Vocabulary* vocab;
    std::string_view View(uint32_t entry) const { return vocab->strings_[entry]; }
    std::string_view View(std::string_view s) const { return s; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return View(a) == View(b);
    }
  };

  PackedStrings strings_;           // per entry
  std::vector<int32_t> entry_id_;   // per entry
  std::vector<uint32_t> id_entry_;  // per id: its last entry, or kNoEntry
  absl::flat_hash_set<uint32_t, EntryHash, EntryEq> index_{0, EntryHash{this}, EntryEq{this}};
  size_t max_token_bytes_ = 0;
};

}  // namespace infera::text

#endif  // INFERA_TEXT_VOCABULARY_H_
