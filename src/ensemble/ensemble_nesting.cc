#include "ensemble/ensemble_nesting.h"

#include <algorithm>
#include <utility>

#include "common/str_cat.h"

namespace infera {
namespace {

absl::Status TooDeep(int max_depth, const std::vector<std::string>& chain) {
  return absl::InvalidArgumentError(
      StrCat("ensembles nest more than ", max_depth, " deep: ", StrJoin(chain, " -> ")));
}

std::vector<std::string> Distinct(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace

std::vector<std::string> EnsembleStepNames(const inference::ModelConfig& config) {
  if (config.platform() != "ensemble") return {};
  std::vector<std::string> names;
  for (const auto& step : config.ensemble_scheduling().step()) names.push_back(step.model_name());
  return Distinct(std::move(names));
}

absl::Status NestingWalk::Walk(const std::string& root) {
  if (done_.count(root)) return absl::OkStatus();
  // The ensembles from `root` down to the one being walked: the only stack there is.
  struct Frame {
    std::string name;
    std::vector<std::string> steps;
    size_t next = 0;
    int height = 1;
    std::string deepest_step;
  };
  std::vector<Frame> path;
  auto path_names = [&path] {
    std::vector<std::string> names;
    for (const Frame& f : path) names.push_back(f.name);
    return names;
  };
  auto raise = [](Frame& parent, const std::string& step, int step_height) {
    if (step_height > 0 && step_height + 1 > parent.height) {
      parent.height = step_height + 1;
      parent.deepest_step = step;
    }
  };
  // Looks `name` up: a leaf is done at once; an ensemble goes on the path.
  auto enter = [&](const std::string& name) -> absl::Status {
    std::optional<std::vector<std::string>> steps = lookup_(name);
    if (!steps) {
      done_[name] = Done{};
      order_.push_back(name);
      return absl::OkStatus();
    }
    if (static_cast<int>(path.size()) + 1 > max_depth_) {
      std::vector<std::string> chain = path_names();
      chain.push_back(name);
      return TooDeep(max_depth_, chain);
    }
    Frame frame;
    frame.name = name;
    frame.steps = Distinct(std::move(*steps));
    path.push_back(std::move(frame));
    return absl::OkStatus();
  };
  if (absl::Status entered = enter(root); !entered.ok()) return entered;
  while (!path.empty()) {
    Frame& top = path.back();
    if (top.next == top.steps.size()) {
      Done done{top.height, top.deepest_step};
      const std::string name = std::move(top.name);
      path.pop_back();
      done_[name] = done;
      order_.push_back(name);
      if (!path.empty()) raise(path.back(), name, done.height);
      continue;
    }
    const std::string step = top.steps[top.next++];
    for (size_t i = 0; i < path.size(); ++i) {
      if (path[i].name != step) continue;
      std::vector<std::string> chain = path_names();
      chain.push_back(step);
      return absl::InvalidArgumentError(
          StrCat("ensembles nest in a cycle: ", StrJoin(chain, " -> "), " (an ensemble would run itself)"));
    }
    if (auto it = done_.find(step); it != done_.end()) {
      if (static_cast<int>(path.size()) + it->second.height > max_depth_) {
        std::vector<std::string> chain = path_names();
        for (std::string& name : DeepestChain(step)) chain.push_back(std::move(name));
        return TooDeep(max_depth_, chain);
      }
      raise(top, step, it->second.height);
      continue;
    }
    const size_t depth = path.size();
    if (absl::Status entered = enter(step); !entered.ok()) return entered;
    if (path.size() == depth) raise(path.back(), step, 0);  // a leaf (`top` may have moved)
  }
  return absl::OkStatus();
}

int NestingWalk::Height(const std::string& name) const {
  auto it = done_.find(name);
  return it == done_.end() ? 0 : it->second.height;
}

std::vector<std::string> NestingWalk::DeepestChain(const std::string& name) const {
  std::vector<std::string> chain;
  for (std::string at = name; !at.empty();) {
    auto it = done_.find(at);
    if (it == done_.end() || it->second.height == 0) break;
    chain.push_back(at);
    at = it->second.deepest_step;
  }
  return chain;
}

void EnsembleGraph::Set(const std::string& name, std::vector<std::string> steps) {
  if (auto old = steps_.find(name); old != steps_.end()) {
    for (const std::string& step : old->second) {
      auto users = users_.find(step);
      if (users == users_.end()) continue;
      users->second.erase(name);
      if (users->second.empty()) users_.erase(users);
    }
    steps_.erase(old);
  }
  if (steps.empty()) return;
  steps = Distinct(std::move(steps));
  for (const std::string& step : steps) users_[step].insert(name);
  steps_[name] = std::move(steps);
}

const std::vector<std::string>* EnsembleGraph::Steps(const std::string& name) const {
  auto it = steps_.find(name);
  return it == steps_.end() ? nullptr : &it->second;
}

absl::Status EnsembleGraph::CheckReplace(const std::string& name, const std::vector<std::string>& steps,
                                         int max_depth) const {
  if (steps.empty()) return absl::OkStatus();  // fewer edges: nothing can get worse
  // Below: a cycle through `name` shows on the way down from it.
  NestingWalk below(max_depth, [&](const std::string& model) -> std::optional<std::vector<std::string>> {
    if (model == name) return steps;
    const std::vector<std::string>* serving = Steps(model);
    if (serving == nullptr) return std::nullopt;
    return *serving;
  });
  if (absl::Status walked = below.Walk(name); !walked.ok()) return walked;
  // Above: the ensembles that already use `name` get deeper with it.
  std::vector<std::string> chain = LongestChainAbove(name, max_depth);
  if (static_cast<int>(chain.size()) + below.Height(name) <= max_depth) return absl::OkStatus();
  for (std::string& model : below.DeepestChain(name)) chain.push_back(std::move(model));
  return TooDeep(max_depth, chain);
}

std::vector<std::string> EnsembleGraph::LongestChainAbove(const std::string& name, int max_depth) const {
  // Depth first up the reverse edges, without recursion. The graph above is acyclic
  // while every change is checked; a cycle or a chain past the bound would still end the
  // walk (a user on the path is skipped; past max_depth + 1 levels nothing is entered).
  struct Above {
    int count = 0;     // ensembles above on the longest chain
    std::string user;  // the first of them; empty at the top
  };
  std::map<std::string, Above> memo;
  struct Frame {
    std::string name;
    std::vector<std::string> users;
    size_t next = 0;
    Above best;
  };
  auto users_of = [this](const std::string& model) {
    auto it = users_.find(model);
    return it == users_.end() ? std::vector<std::string>{}
                              : std::vector<std::string>(it->second.begin(), it->second.end());
  };
  std::vector<Frame> path;
  auto enter = [&](const std::string& model) {
    Frame frame;
    frame.name = model;
    frame.users = users_of(model);
    path.push_back(std::move(frame));
  };
  enter(name);
  while (!path.empty()) {
    Frame& top = path.back();
    if (top.next == top.users.size()) {
      const std::string done = std::move(top.name);
      const Above best = top.best;
      path.pop_back();
      memo[done] = best;
      if (!path.empty() && best.count + 1 > path.back().best.count) path.back().best = {best.count + 1, done};
      continue;
    }
    const std::string user = top.users[top.next++];
    bool on_path = false;
    for (const Frame& f : path) on_path = on_path || f.name == user;
    if (on_path) continue;
    if (auto it = memo.find(user); it != memo.end()) {
      if (it->second.count + 1 > top.best.count) top.best = {it->second.count + 1, user};
      continue;
    }
    if (static_cast<int>(path.size()) > max_depth + 1) {
      if (top.best.count < 1) top.best = {1, user};
      continue;
    }
    enter(user);
  }
  std::vector<std::string> chain;
  for (std::string at = memo[name].user; !at.empty(); at = memo[at].user) chain.push_back(at);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

}  // namespace infera
