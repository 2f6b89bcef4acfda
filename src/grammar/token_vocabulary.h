// TokenVocabulary: what each token id of a model writes, as bytes, and a trie over
// those byte strings, built once per engine (the LLM engine builds it from its
// tokenizer: llm/grammar_constraint.h) and shared by every compiled grammar.
//
// A token whose bytes are "" is never allowed by a grammar: special and added tokens
// (their text is not what a grammar describes), ids past the tokenizer's vocabulary
// (padded embedding rows), tokens that write nothing. The end tokens (EOS) are allowed
// exactly where the grammar may end (grammar_matcher.h).
//
// The trie: tokens sorted by their bytes; node 0 is the root (the empty prefix); a node's
// children are contiguous in `nodes()` and sorted by byte; each node lists the tokens
// whose bytes end there. Walking it visits each shared prefix once, so a mask costs the
// number of trie nodes the grammar lets through, not the vocabulary's total bytes.
//
// Thread-safe: immutable after construction.
#ifndef INFERA_GRAMMAR_TOKEN_VOCABULARY_H_
#define INFERA_GRAMMAR_TOKEN_VOCABULARY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace infera::grammar {

class TokenVocabulary {
 public:
  struct Node {
    int32_t first_child = 0;
    int32_t num_children = 0;
    int32_t first_token = 0;  // into token_order()
    int32_t num_tokens = 0;
    uint8_t byte = 0;         // the byte on the edge from the parent
  };

  // token_bytes[id] for every id of the model's vocabulary ("": never allowed).
  TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> end_token_ids);

  int32_t size() const { return static_cast<int32_t>(bytes_.size()); }
  std::string_view bytes(int32_t id) const {
    return id >= 0 && id < size() ? std::string_view(bytes_[id]) : std::string_view();
  }
  const std::vector<int32_t>& end_token_ids() const { return end_ids_; }
  bool IsEnd(int32_t id) const;
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<int32_t>& token_order() const { return order_; }
  size_t memory_bytes() const { return memory_bytes_; }

 private:
  std::vector<std::string> bytes_;
  std::vector<int32_t> end_ids_;
  std::vector<Node> nodes_;
  std::vector<int32_t> order_;
  size_t memory_bytes_ = 0;
};

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_TOKEN_VOCABULARY_H_
