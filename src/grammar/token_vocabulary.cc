#include "grammar/token_vocabulary.h"

#include <algorithm>
#include <deque>

namespace infera::grammar {

TokenVocabulary::TokenVocabulary(std::vector<std::string> token_bytes, std::vector<int32_t> end_token_ids)
    : bytes_(std::move(token_bytes)), end_ids_(std::move(end_token_ids)) {
  for (int32_t id : end_ids_) {
    if (id >= 0 && id < size()) bytes_[id].clear();  // never through the bytes path
  }
  for (int32_t id = 0; id < size(); ++id) {
    if (!bytes_[id].empty()) order_.push_back(id);
  }
  std::sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
    return bytes_[a] != bytes_[b] ? bytes_[a] < bytes_[b] : a < b;
  });
  // Breadth first: a node's children are made together, so they are contiguous.
  struct Pending {
    int32_t node, lo, hi;
    size_t depth;
  };
  nodes_.push_back({});
  std::deque<Pending> queue{{0, 0, static_cast<int32_t>(order_.size()), 0}};
  while (!queue.empty()) {
    const Pending p = queue.front();
    queue.pop_front();
    int32_t i = p.lo;
    while (i < p.hi && bytes_[order_[i]].size() == p.depth) ++i;
    nodes_[p.node].first_token = p.lo;
    nodes_[p.node].num_tokens = i - p.lo;
    nodes_[p.node].first_child = static_cast<int32_t>(nodes_.size());
    int32_t children = 0;
    for (int32_t j = i; j < p.hi;) {
      const auto b = static_cast<uint8_t>(bytes_[order_[j]][p.depth]);
      int32_t k = j;
      while (k < p.hi && static_cast<uint8_t>(bytes_[order_[k]][p.depth]) == b) ++k;
      Node child;
      child.byte = b;
      nodes_.push_back(child);
      queue.push_back({static_cast<int32_t>(nodes_.size() - 1), j, k, p.depth + 1});
      ++children;
      j = k;
    }
    nodes_[p.node].num_children = children;
  }
  memory_bytes_ = nodes_.size() * sizeof(Node) + order_.size() * sizeof(int32_t);
  for (const std::string& b : bytes_) memory_bytes_ += sizeof(std::string) + b.capacity();
}

bool TokenVocabulary::IsEnd(int32_t id) const {
  return std::find(end_ids_.begin(), end_ids_.end(), id) != end_ids_.end();
}

}  // namespace infera::grammar
