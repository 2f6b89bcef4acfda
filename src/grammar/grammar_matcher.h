// GrammarMatcher: one request's position in a compiled grammar — a pushdown automaton
// over bytes, as llama.cpp's grammar is: the set of live parse stacks, each the
// positions still to match (top: a byte set to match next; below: where each enclosing
// rule continues). A byte advances every stack whose top accepts it and expands the new
// tops eagerly (rule references replaced by their alternatives; a rule that ends pops);
// an empty stack means the root is complete. Left recursion is refused at parse time,
// so expansion terminates (a loop through rules that match nothing, in tail position,
// is cut where it comes back to a state it expanded); a reference in tail position does
// not grow the stack, so repetitions run in constant depth.
//
// Stacks are persistent linked lists in an arena (push and pop are O(1), stacks share
// their bottoms); two stacks are the same when their positions are (compared by a hash
// of the chain, then the chain), so a state is a canonical set. Ambiguity is bounded:
// a byte that would leave more than kMaxStacks live stacks (or take more than
// kMaxExpansionSteps to expand, over all stacks) is refused like a byte the grammar
// does not allow, and a token mask stops after kMaxMaskSteps.
//
// Token masks (FillNextTokenMask): the tokens whose bytes the matcher would accept,
// found by walking the vocabulary's trie depth first with the stack set of each prefix,
// pruning a subtree as soon as its prefix is refused, plus the end tokens where CanEnd();
// the walk interns its stack sets and memoises (set, byte) transitions, so a subtree
// that stays in one state costs a lookup per trie node.
// Masks are cached in the compiled grammar by state (compiled_grammar.h).
//
// Not thread-safe (one request, the engine thread); the compiled grammar it points to is.
#ifndef INFERA_GRAMMAR_GRAMMAR_MATCHER_H_
#define INFERA_GRAMMAR_GRAMMAR_MATCHER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "grammar/compiled_grammar.h"

namespace infera::grammar {

inline constexpr size_t kMaxStacks = 1024;
inline constexpr size_t kMaxExpansionSteps = 1 << 16;  // per byte, all stacks together
// Expansion steps one token mask may take (~0.1-0.5 s); past them the tokens not yet
// reached are left out of the mask (never ones the grammar refuses).
inline constexpr size_t kMaxMaskSteps = size_t{1} << 24;

class GrammarMatcher {
 public:
  explicit GrammarMatcher(std::shared_ptr<const CompiledGrammar> grammar);

  // Advances over `bytes` when the grammar accepts all of them; else returns false and
  // leaves the state as it was.
  bool AcceptBytes(std::string_view bytes);
  // AcceptBytes(the token's bytes); an end token is accepted (without advancing) exactly
  // when CanEnd(); a token that writes nothing is refused. REQUIRES a vocabulary.
  bool AcceptToken(int32_t id);
  // The root rule is complete: the output so far is a sentence of the grammar.
  bool CanEnd() const;
  // Nothing more can follow: every live stack is complete (or none is left).
  bool IsTerminated() const;

  // Sets `mask` (vocabulary size bits) to the tokens AcceptToken would accept now.
  // Cached per state in the compiled grammar. REQUIRES a vocabulary.
  void FillNextTokenMask(TokenMask& mask);
  // The same without the cache (tests, benchmarks).
  void ComputeNextTokenMask(TokenMask& mask);
  // A key naming the current state (the live stacks' positions), for the mask cache.
  std::string StateKey() const;

  size_t num_stacks() const { return stacks_.size(); }
  // Tests: smaller bounds on a mask walk's memo, to exercise the walk past them.
  void set_walk_limits_for_test(size_t states, size_t nodes) {
    max_walk_states_ = states;
    max_walk_nodes_ = nodes;
  }
  const CompiledGrammar& compiled() const { return *grammar_; }

 private:
  struct Node {
    int32_t pos;     // element index
    int32_t parent;  // node index, -1: bottom
    uint64_t hash;   // of the chain from here down
  };
  static constexpr int32_t kComplete = -1;  // an empty stack

  int32_t NewNode(int32_t pos, int32_t parent);
  // Pushes the stacks `push(parent, pos)` expands to onto `out`; false past the caps.
  bool Expand(int32_t pos, int32_t parent, std::vector<int32_t>& out);
  // False when Expand already expanded the tail reference at `pos` over `parent`.
  bool FirstVisit(int32_t pos, int32_t parent);
  // `out` = the stacks after `byte` from `in` (deduplicated); false past the caps.
  bool Advance(const std::vector<int32_t>& in, uint8_t byte, std::vector<int32_t>& out);
  void Dedupe(std::vector<int32_t>& stacks) const;
  bool SameStack(int32_t a, int32_t b) const;
  // The trie walk's states: each distinct stack set met (interned by a hash of its
  // stacks), with the bytes its stacks take next; transitions (state, byte) → state are
  // memoised, so a subtree that stays in one state (a JSON string's characters) costs a
  // lookup per trie node, not an expansion.
  struct WalkState {
    std::vector<int32_t> stacks;
    ByteSet next_bytes;
  };
  int32_t InternWalkState(std::vector<int32_t>& stacks);
  // `transient`: `state` is not interned (the memo's bounds were reached): nothing is
  // memoised from it and what its subtree makes is dropped after it.
  void WalkTrie(int32_t trie_node, int32_t state, bool transient, TokenMask& mask);
  void MarkTokens(const TokenVocabulary::Node& node, TokenMask& mask) const;

  void MaybeCompact();

  std::shared_ptr<const CompiledGrammar> grammar_;
  const Grammar& g_;
  std::vector<Node> nodes_;
  std::vector<int32_t> stacks_;
  std::vector<WalkState> walk_states_;
  std::unordered_map<uint64_t, std::vector<int32_t>> walk_index_;  // set hash → states
  std::unordered_map<uint64_t, int32_t> walk_next_;  // state << 8 | byte → state, -1: refused
  size_t walk_mark_ = 0;  // nodes_.size() when the walk began
  uint64_t expansion_steps_ = 0;  // Expand's steps, ever
  uint64_t step_limit_ = 0;       // where the current byte's expansion stops
  uint64_t walk_step_limit_ = 0;  // where the current mask walk stops
  // Bounds on a walk's memo: interned states, and nodes made for them.
  size_t max_walk_states_ = 1 << 14;
  size_t max_walk_nodes_ = size_t{1} << 20;
  std::vector<std::pair<int32_t, int32_t>> work_;
  std::vector<uint64_t> visited_;  // Expand's tail references, few: a linear scan
  std::unordered_set<uint64_t> visited_set_;  // past 32 of them
  size_t compact_at_ = 1 << 14;
};

}  // namespace infera::grammar

#endif  // INFERA_GRAMMAR_GRAMMAR_MATCHER_H_
