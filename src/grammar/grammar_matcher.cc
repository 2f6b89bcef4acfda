#include "grammar/grammar_matcher.h"

#include <algorithm>
#include <unordered_map>

namespace infera::grammar {
namespace {

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr uint64_t kBottomHash = 0x5bd1e9955bd1e995ULL;

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar)
    : grammar_(std::move(grammar)), g_(grammar_->grammar()) {
  step_limit_ = kMaxExpansionSteps;
  for (int32_t alt : g_.rules[g_.root]) {
    if (!Expand(alt, -1, stacks_)) {
      stacks_.clear();
      break;
    }
  }
  Dedupe(stacks_);
  if (stacks_.size() > kMaxStacks) stacks_.clear();
}

int32_t GrammarMatcher::NewNode(int32_t pos, int32_t parent) {
  const uint64_t below = parent < 0 ? kBottomHash : nodes_[parent].hash;
  nodes_.push_back({pos, parent, Mix(below ^ (static_cast<uint64_t>(pos) * 0x100000001b3ULL))});
  return static_cast<int32_t>(nodes_.size() - 1);
}

bool GrammarMatcher::FirstVisit(int32_t pos, int32_t parent) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(pos)) << 32) | static_cast<uint32_t>(parent);
  if (visited_set_.empty()) {
    if (std::find(visited_.begin(), visited_.end(), key) != visited_.end()) return false;
    visited_.push_back(key);
    if (visited_.size() > 32) visited_set_.insert(visited_.begin(), visited_.end());
    return true;
  }
  return visited_set_.insert(key).second;
}

bool GrammarMatcher::Expand(int32_t pos, int32_t parent, std::vector<int32_t>& out) {
  work_.clear();
  visited_.clear();
  visited_set_.clear();
  work_.push_back({pos, parent});
  while (!work_.empty()) {
    auto [p, par] = work_.back();
    work_.pop_back();
    while (true) {
      if (++expansion_steps_ > step_limit_) return false;
      const Element& e = g_.elements[p];
      if (e.type == ElementType::kEnd) {
        if (par < 0) {
          out.push_back(kComplete);
          break;
        }
        p = nodes_[par].pos;
        par = nodes_[par].parent;
        continue;
      }
      if (e.type == ElementType::kByteSet) {
        out.push_back(NewNode(p, par));
        break;
      }
      // A rule reference: its alternatives, each continuing where this one does (in
      // tail position nothing is pushed for the continuation). A tail reference seen
      // before with the same stack below is a loop through rules that matched nothing
      // (`("a"?)*`): everything it leads to is already on the way.
      const bool tail = g_.elements[p + 1].type == ElementType::kEnd;
      if (tail && !FirstVisit(p, par)) break;
      const int32_t cont = tail ? par : NewNode(p + 1, par);
      for (int32_t alt : g_.rules[e.value]) work_.push_back({alt, cont});
      break;
    }
  }
  return true;
}

bool GrammarMatcher::SameStack(int32_t a, int32_t b) const {
  while (a != b) {
    if (a < 0 || b < 0) return false;
    if (nodes_[a].hash != nodes_[b].hash || nodes_[a].pos != nodes_[b].pos) return false;
    a = nodes_[a].parent;
    b = nodes_[b].parent;
  }
  return true;
}

void GrammarMatcher::Dedupe(std::vector<int32_t>& stacks) const {
  if (stacks.size() < 2) return;
  auto hash = [&](int32_t s) { return s < 0 ? 0 : nodes_[s].hash; };
  std::sort(stacks.begin(), stacks.end(), [&](int32_t a, int32_t b) {
    const uint64_t ha = hash(a), hb = hash(b);
    return ha != hb ? ha < hb : a < b;
  });
  size_t kept = 0;
  for (size_t i = 0; i < stacks.size(); ++i) {
    bool dup = false;
    for (size_t j = kept; j-- > 0 && hash(stacks[j]) == hash(stacks[i]);) {
      if (SameStack(stacks[j], stacks[i])) {
        dup = true;
        break;
      }
    }
    if (!dup) stacks[kept++] = stacks[i];
  }
  stacks.resize(kept);
}

bool GrammarMatcher::Advance(const std::vector<int32_t>& in, uint8_t byte, std::vector<int32_t>& out) {
  out.clear();
  step_limit_ = expansion_steps_ + kMaxExpansionSteps;  // for all of this byte's stacks
  for (int32_t s : in) {
    if (s < 0) continue;
    const Node n = nodes_[s];  // a copy: Expand grows nodes_
    if (!g_.byte_sets[g_.elements[n.pos].value].Has(byte)) continue;
    if (!Expand(n.pos + 1, n.parent, out) || out.size() > kMaxStacks * 4) {
      out.clear();
      return false;
    }
  }
  Dedupe(out);
  if (out.size() > kMaxStacks) {
    out.clear();
    return false;
  }
  return !out.empty();
}

bool GrammarMatcher::AcceptBytes(std::string_view bytes) {
  if (bytes.empty()) return true;
  const size_t mark = nodes_.size();
  std::vector<int32_t> cur = stacks_, next;
  for (char c : bytes) {
    if (!Advance(cur, static_cast<uint8_t>(c), next)) {
      nodes_.resize(mark);
      return false;
    }
    cur.swap(next);
  }
  stacks_ = std::move(cur);
  MaybeCompact();
  return true;
}

bool GrammarMatcher::AcceptToken(int32_t id) {
  const TokenVocabulary& v = *grammar_->vocabulary();
  if (v.IsEnd(id)) return CanEnd();
  const std::string_view bytes = v.bytes(id);
  return !bytes.empty() && AcceptBytes(bytes);
}

bool GrammarMatcher::CanEnd() const {
  return std::find(stacks_.begin(), stacks_.end(), kComplete) != stacks_.end();
}

bool GrammarMatcher::IsTerminated() const {
  return std::all_of(stacks_.begin(), stacks_.end(), [](int32_t s) { return s == kComplete; });
}

std::string GrammarMatcher::StateKey() const {
  std::string key;
  for (int32_t s : stacks_) {  // canonical order: Dedupe sorted them by hash
    for (; s >= 0; s = nodes_[s].parent) {
      const int32_t pos = nodes_[s].pos;
      key.append(reinterpret_cast<const char*>(&pos), sizeof(pos));
    }
    const int32_t end = -1;
    key.append(reinterpret_cast<const char*>(&end), sizeof(end));
  }
  return key;
}

void GrammarMatcher::FillNextTokenMask(TokenMask& mask) {
  std::string key = StateKey();
  if (std::shared_ptr<const TokenMask> hit = grammar_->FindMask(key)) {
    mask = *hit;
    return;
  }
  ComputeNextTokenMask(mask);
  grammar_->StoreMask(std::move(key), std::make_shared<const TokenMask>(mask));
}

void GrammarMatcher::ComputeNextTokenMask(TokenMask& mask) {
  const TokenVocabulary& v = *grammar_->vocabulary();
  mask.assign((static_cast<size_t>(v.size()) + 63) / 64, 0);
  if (CanEnd()) {
    for (int32_t id : v.end_token_ids()) {
      if (id >= 0 && id < v.size()) MaskSet(mask, id);
    }
  }
  // Nodes made during the walk are dropped after it (the walk's states point to them).
  const size_t mark = nodes_.size();
  walk_mark_ = mark;
  walk_step_limit_ = expansion_steps_ + kMaxMaskSteps;
  std::vector<int32_t> start = stacks_;
  WalkTrie(0, InternWalkState(start), false, mask);
  walk_states_.clear();
  walk_index_.clear();
  walk_next_.clear();
  nodes_.resize(mark);
}

int32_t GrammarMatcher::InternWalkState(std::vector<int32_t>& stacks) {
  uint64_t h = stacks.size();
  for (int32_t s : stacks) h = Mix(h ^ (s < 0 ? kBottomHash : nodes_[s].hash));
  std::vector<int32_t>& same_hash = walk_index_[h];
  for (int32_t id : same_hash) {
    const std::vector<int32_t>& other = walk_states_[id].stacks;
    if (other.size() != stacks.size()) continue;
    bool equal = true;
    for (size_t i = 0; i < stacks.size() && equal; ++i) equal = SameStack(other[i], stacks[i]);
    if (equal) return id;
  }
  WalkState state;
  for (int32_t s : stacks) {
    if (s < 0) continue;
    const ByteSet& set = g_.byte_sets[g_.elements[nodes_[s].pos].value];
    for (int w = 0; w < 4; ++w) state.next_bytes.bits[w] |= set.bits[w];
  }
  state.stacks = std::move(stacks);
  walk_states_.push_back(std::move(state));
  const int32_t id = static_cast<int32_t>(walk_states_.size() - 1);
  same_hash.push_back(id);
  return id;
}

void GrammarMatcher::WalkTrie(int32_t trie_node, int32_t state, bool transient, TokenMask& mask) {
  const TokenVocabulary& v = *grammar_->vocabulary();
  const TokenVocabulary::Node& node = v.nodes()[trie_node];
  for (int32_t c = node.first_child; c < node.first_child + node.num_children; ++c) {
    const TokenVocabulary::Node& child = v.nodes()[c];
    if (!walk_states_[state].next_bytes.Has(child.byte)) continue;
    const uint64_t key = (static_cast<uint64_t>(state) << 8) | child.byte;
    if (!transient) {
      if (auto it = walk_next_.find(key); it != walk_next_.end()) {
        if (it->second < 0) continue;
        MarkTokens(child, mask);
        if (child.num_children > 0) WalkTrie(c, it->second, false, mask);
        continue;
      }
    }
    // Memoise while the walk's states and nodes stay within bounds; past them (a
    // grammar with very many distinct states), walk the subtree with a transient state
    // and drop what it made, as a walk without memo would.
    const bool memo = !transient && walk_states_.size() < max_walk_states_ &&
                      nodes_.size() - walk_mark_ < max_walk_nodes_;
    const size_t node_mark = nodes_.size();
    std::vector<int32_t> stacks;
    const std::vector<int32_t> from = walk_states_[state].stacks;  // a copy: states grow
    // Past the walk's work budget the rest of the trie counts as refused (a hostile
    // grammar cannot hold the engine thread; the mask stays within the grammar).
    const bool ok = expansion_steps_ < walk_step_limit_ && Advance(from, child.byte, stacks);
    if (memo) {
      const int32_t next = ok ? InternWalkState(stacks) : -1;
      walk_next_.emplace(key, next);
      if (next < 0) continue;
      MarkTokens(child, mask);
      if (child.num_children > 0) WalkTrie(c, next, false, mask);
      continue;
    }
    if (ok) {
      MarkTokens(child, mask);
      if (child.num_children > 0) {
        const size_t state_mark = walk_states_.size();
        WalkState t;
        for (int32_t s : stacks) {
          if (s < 0) continue;
          const ByteSet& set = g_.byte_sets[g_.elements[nodes_[s].pos].value];
          for (int w = 0; w < 4; ++w) t.next_bytes.bits[w] |= set.bits[w];
        }
        t.stacks = std::move(stacks);
        walk_states_.push_back(std::move(t));
        WalkTrie(c, static_cast<int32_t>(state_mark), /*transient=*/true, mask);
        walk_states_.resize(state_mark);
      }
    }
    nodes_.resize(node_mark);
  }
}

void GrammarMatcher::MarkTokens(const TokenVocabulary::Node& node, TokenMask& mask) const {
  const TokenVocabulary& v = *grammar_->vocabulary();
  for (int32_t t = node.first_token; t < node.first_token + node.num_tokens; ++t) MaskSet(mask, v.token_order()[t]);
}

void GrammarMatcher::MaybeCompact() {
  if (nodes_.size() < compact_at_) return;
  // Copy the live stacks into a fresh arena (shared bottoms stay shared).
  std::vector<Node> fresh;
  std::unordered_map<int32_t, int32_t> moved;
  std::vector<int32_t> chain;
  for (int32_t& s : stacks_) {
    if (s < 0) continue;
    chain.clear();
    for (int32_t n = s; n >= 0 && !moved.contains(n); n = nodes_[n].parent) chain.push_back(n);
    for (size_t i = chain.size(); i-- > 0;) {
      const Node& old = nodes_[chain[i]];
      const int32_t parent = old.parent < 0 ? -1 : moved.at(old.parent);
      fresh.push_back({old.pos, parent, old.hash});
      moved.emplace(chain[i], static_cast<int32_t>(fresh.size() - 1));
    }
    s = moved.at(s);
  }
  nodes_ = std::move(fresh);
  compact_at_ = std::max<size_t>(1 << 14, nodes_.size() * 4);
}

}  // namespace infera::grammar
