#include "grammar/grammar.h"

#include <algorithm>

#include "common/str_cat.h"

namespace infera::grammar {

std::vector<bool> NullableRules(const Grammar& g) {
  std::vector<bool> nullable(g.rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < g.rules.size(); ++r) {
      if (nullable[r]) continue;
      for (int32_t pos : g.rules[r]) {
        bool empty = true;
        for (int32_t p = pos; g.elements[p].type != ElementType::kEnd; ++p) {
          const Element& e = g.elements[p];
          if (e.type == ElementType::kByteSet || !nullable[e.value]) {
            empty = false;
            break;
          }
        }
        if (empty) {
          nullable[r] = true;
          changed = true;
          break;
        }
      }
    }
  }
  return nullable;
}

absl::Status CheckNoLeftRecursion(const Grammar& g) {
  const std::vector<bool> nullable = NullableRules(g);
  const int32_t n = static_cast<int32_t>(g.rules.size());
  // The left-edge graph: r → c when c can come first in r (after rules that can be
  // empty). An edge is a tail edge when c is also the last element of its alternative:
  // expanding it pushes nothing, so a cycle of tail edges only (a repetition of
  // something that can be empty, `("a"?)*`) returns the matcher to a state it has seen
  // and ends there (grammar_matcher.cc). A cycle through a non-tail edge grows the stack
  // forever: that is left recursion.
  struct Edge {
    int32_t to;
    bool tail;
  };
  std::vector<std::vector<Edge>> left(n);
  for (int32_t r = 0; r < n; ++r) {
    for (int32_t pos : g.rules[r]) {
      for (int32_t p = pos; g.elements[p].type == ElementType::kRuleRef; ++p) {
        left[r].push_back({g.elements[p].value, g.elements[p + 1].type == ElementType::kEnd});
        if (!nullable[g.elements[p].value]) break;
      }
    }
  }
  // Tarjan's strongly connected components, iteratively (a chain of rules may be long).
  std::vector<int32_t> index(n, -1), low(n, 0), component(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<int32_t> stack;
  std::vector<std::pair<int32_t, size_t>> calls;
  int32_t next_index = 0, num_components = 0;
  for (int32_t start = 0; start < n; ++start) {
    if (index[start] >= 0) continue;
    calls.push_back({start, 0});
    while (!calls.empty()) {
      auto& [v, i] = calls.back();
      if (i == 0) {
        index[v] = low[v] = next_index++;
        stack.push_back(v);
        on_stack[v] = true;
      }
      if (i < left[v].size()) {
        const int32_t w = left[v][i++].to;
        if (index[w] < 0) {
          calls.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const int32_t done = v;
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
      if (low[done] == index[done]) {
        int32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          component[w] = num_components;
        } while (w != done);
        ++num_components;
      }
    }
  }
  for (int32_t r = 0; r < n; ++r) {
    for (const Edge& e : left[r]) {
      if (e.tail || component[e.to] != component[r]) continue;
      std::string cycle = g.rule_names[r] == g.rule_names[e.to]
                              ? StrCat(g.rule_names[r], " -> ", g.rule_names[r])
                              : StrCat(g.rule_names[r], " -> ", g.rule_names[e.to], " -> ... -> ", g.rule_names[r]);
      return absl::InvalidArgumentError(
          StrCat("grammar: rule '", g.rule_names[r], "' is left-recursive (", cycle,
                 ", where the rules before each can match the empty string); rewrite it with repetition"));
    }
  }
  return absl::OkStatus();
}

}  // namespace infera::grammar
