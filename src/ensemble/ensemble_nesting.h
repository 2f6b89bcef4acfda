// Ensemble nesting: a step model may itself be an ensemble, so ensembles form a graph (an
// edge from each ensemble to each model its steps name). No ensemble may reach itself
// (a request would run forever), and no chain of nested ensembles may be longer than
// kMaxEnsembleDepth (each level is a call on the requesting thread's stack). Both are
// checked here without recursion (docs/pipelines.md, "Nesting"):
//
//   EnsembleStepNames(config)   the distinct step model names of an ensemble config.
//   NestingWalk                 a depth-first walk down from a root over a graph it
//                               discovers through a lookup (each model looked up at most
//                               once, an explicit stack): refuses a cycle or a chain past
//                               the bound as soon as it sees one, naming the chain, and
//                               gives the models in load order (each after its steps).
//   EnsembleGraph               the nesting of the ensembles that serve, with the reverse
//                               edges: CheckReplace says whether giving one model new
//                               steps keeps the whole graph free of cycles and within the
//                               bound, looking only above and below that model.
//
// Errors are InvalidArgument (the config is refused): "ensembles nest in a cycle: p -> q
// -> p", "ensembles nest more than 16 deep: e0 -> e1 -> ... -> e16".
//
// Not thread-safe (values owned by one caller; the ModelManager guards its graph with
// its own lock).
#ifndef INFERA_ENSEMBLE_ENSEMBLE_NESTING_H_
#define INFERA_ENSEMBLE_ENSEMBLE_NESTING_H_

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "model_config.pb.h"

namespace infera {

// The distinct model names of `config`'s steps, sorted; empty unless it is an ensemble.
std::vector<std::string> EnsembleStepNames(const inference::ModelConfig& config);

// The step model names of the ensemble `name`, or nullopt when `name` is not an ensemble
// (or not known): a leaf of the walk.
using NestingLookup = std::function<std::optional<std::vector<std::string>>(const std::string& name)>;

class NestingWalk {
 public:
  NestingWalk(int max_depth, NestingLookup lookup) : max_depth_(max_depth), lookup_(std::move(lookup)) {}

  // Walks `root` and everything below it not walked yet. After an error the walk is
  // spent: make a new one.
  absl::Status Walk(const std::string& root);

  // Every model walked (leaves included), each after the models its steps name.
  const std::vector<std::string>& order() const { return order_; }
  // Ensembles on the longest chain down from the walked model `name` (itself included;
  // 0 for a leaf), and that chain.
  int Height(const std::string& name) const;
  std::vector<std::string> DeepestChain(const std::string& name) const;

 private:
  struct Done {
    int height = 0;
    std::string deepest_step;  // the step on the longest chain; empty below a leaf
  };
  const int max_depth_;
  const NestingLookup lookup_;
  std::map<std::string, Done> done_;
  std::vector<std::string> order_;
};

class EnsembleGraph {
 public:
  // `name` now serves with these steps (EnsembleStepNames; empty: it serves no ensemble).
  void Set(const std::string& name, std::vector<std::string> steps);
  // The steps of the serving ensemble `name`; nullptr when it is not one.
  const std::vector<std::string>* Steps(const std::string& name) const;
  // OK when `name` serving with `steps` instead keeps the graph free of cycles and every
  // chain of nested ensembles within `max_depth`; else InvalidArgument naming the chain.
  // Visits the ensembles above and below `name` only.
  absl::Status CheckReplace(const std::string& name, const std::vector<std::string>& steps, int max_depth) const;

 private:
  // The longest chain of ensembles above `name` (outermost first).
  std::vector<std::string> LongestChainAbove(const std::string& name, int max_depth) const;

  std::map<std::string, std::vector<std::string>> steps_;  // serving ensemble -> its step models
  std::map<std::string, std::set<std::string>> users_;     // model -> serving ensembles that name it
};

}  // namespace infera

#endif  // INFERA_ENSEMBLE_ENSEMBLE_NESTING_H_
