// LibTorch first: torch_precision.h only forward-declares torch::jit::Module.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/runtime/graph_iterator.h>
#include <torch/csrc/jit/passes/dead_code_elimination.h>
#include <torch/script.h>

#include "backend/torch/torch_precision.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "backend/torch/torch_errors.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

using torch::jit::Node;
using torch::jit::Value;

std::vector<Node*> AllNodes(std::shared_ptr<torch::jit::Graph> graph) {
  std::vector<Node*> nodes;
  torch::jit::DepthFirstGraphNodeIterator it(graph);
  for (Node* node = it.next(); node != nullptr; node = it.next()) nodes.push_back(node);
  return nodes;
}

// The prepacked int8 weight of one Linear, or nullopt when the layer is not constant fp32.
c10::optional<c10::IValue> PrepackLinear(Node* linear) {
  c10::optional<c10::IValue> weight = torch::jit::toIValue(linear->input(1));
  c10::optional<c10::IValue> bias = torch::jit::toIValue(linear->input(2));
  if (!weight || !weight->isTensor() || !bias || !(bias->isNone() || bias->isTensor())) {
    return c10::nullopt;
  }
  const at::Tensor w = weight->toTensor();
  if (w.dim() != 2 || w.scalar_type() != at::kFloat) return c10::nullopt;
  const at::Tensor scales = (w.abs().amax({1}).to(at::kDouble) / 127.0).clamp_min(1e-12);
  const at::Tensor zero_points = at::zeros({w.size(0)}, at::kLong);
  const at::Tensor qweight = at::quantize_per_channel(w.contiguous(), scales, zero_points, 0,
                                                      at::kQInt8);
  static const c10::OperatorHandle prepack =
      c10::Dispatcher::singleton().findSchemaOrThrow("quantized::linear_prepack", "");
  torch::jit::Stack stack{qweight, *bias};
  prepack.callBoxed(&stack);
  return stack.at(0);
}

}  // namespace

absl::StatusOr<std::string> SelectQuantizedEngine() {
  static std::once_flag once;
  static absl::StatusOr<std::string> selected = absl::InternalError("unset");
  std::call_once(once, [] {
    const auto& supported = at::globalContext().supportedQEngines();
    for (at::QEngine engine : {at::QEngine::X86, at::QEngine::FBGEMM, at::QEngine::ONEDNN,
                               at::QEngine::QNNPACK}) {
      if (std::find(supported.begin(), supported.end(), engine) != supported.end()) {
        at::globalContext().setQEngine(engine);
        selected = c10::toString(engine);
        return;
      }
    }
    selected = absl::FailedPreconditionError(
        "this LibTorch build has no quantised CPU engine (x86, fbgemm, onednn or qnnpack); "
        "PRECISION int8_dynamic is unavailable");
  });
  return selected;
}

absl::StatusOr<int> QuantizeLinearDynamic(torch::jit::Module& frozen) {
  return CatchTorchErrors(absl::StatusCode::kInternal, "int8_dynamic rewrite failed",
               [&]() -> absl::StatusOr<int> {
    std::shared_ptr<torch::jit::Graph> graph = frozen.get_method("forward").graph();
    const c10::Symbol linear_dynamic = c10::Symbol::fromQualString("quantized::linear_dynamic");
    int replaced = 0;
    for (Node* node : AllNodes(graph)) {
      if (node->kind() != c10::aten::linear) continue;
      c10::optional<c10::IValue> packed = PrepackLinear(node);
      if (!packed) continue;
      torch::jit::WithInsertPoint insert_point(node);
      Value* packed_value = graph->insertConstant(*packed);
      Value* output = graph->insert(linear_dynamic, {node->input(0), packed_value});
      output->setType(node->output()->type());
      node->output()->replaceAllUsesWith(output);
      node->destroy();
      ++replaced;
    }
    torch::jit::EliminateDeadCode(graph);  // drops the fp32 weight constants
    return replaced;
  });
}

int64_t SmallestEmbeddingRows(const torch::jit::Module& module, int64_t cap) {
  int64_t rows = cap;
  try {
    std::shared_ptr<torch::jit::Graph> graph = module.get_method("forward").graph();
    for (Node* node : AllNodes(graph)) {
      if (node->kind() != c10::aten::embedding && node->kind() != c10::aten::embedding_bag) {
        continue;
      }
      c10::optional<c10::IValue> weight = torch::jit::toIValue(node->input(0));
      if (weight && weight->isTensor() && weight->toTensor().dim() == 2) {
        rows = std::min<int64_t>(rows, weight->toTensor().size(0));
      }
    }
  } catch (const std::exception& e) {
    INFERA_LOG(VERBOSE) << "pytorch: cannot read embedding sizes: " << e.what();
  }
  return std::max<int64_t>(rows, 1);
}

}  // namespace infera
