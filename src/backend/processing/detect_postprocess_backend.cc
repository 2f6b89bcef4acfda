// detect_postprocess: per-candidate boxes and class scores → the kept detections after
// a score threshold and greedy non-maximum suppression (docs/pipelines.md,
// "detect_postprocess").
//
// Rules (the contract the unit and integration tests pin down):
//   - boxes are decoded to xyxy (`cxcywh`: x1 = cx - w/2, ...), in float as given;
//   - a candidate is (box i, class c) with scores[i, c] >= score_threshold (NaN never
//     passes); per-class mode considers every such pair (a box may be kept for two
//     classes), class-agnostic mode only each box's best class (ties: lower class);
//   - a candidate whose decoded box has a NaN or infinite coordinate is dropped;
//   - candidates are visited by descending score, ties by lower box index, then lower
//     class; one is kept unless it overlaps a kept candidate (of the same class, or any
//     class when class-agnostic) with IoU > iou_threshold (IoU computed in double;
//     IoU exactly at the threshold does not suppress);
//   - a box with zero or negative width or height has area 0 and IoU 0 with every box:
//     it neither suppresses nor is suppressed;
//   - at most max_detections are kept, in visiting order; rows past num_detections are 0.
// Cost per batch row: O(N·C) to threshold, O(P) to heap the P passing candidates
// (P <= N·C, capped by the config below) and O(log P) for each one visited, O(V · M) for
// the suppression of the V visited (each is compared with at most M kept ones); V = P in
// the worst case (everything suppressed), so O(N·C·(log(N·C) + M)) is the bound.
#include <algorithm>
#include <cmath>

#include "backend/processing/postprocess_parameters.h"
#include "backend/processing/processing_backends.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "repository/model_config_util.h"

namespace infera {
namespace {

using processing::BoolParameter;
using processing::CheckTensor;
using processing::ChoiceParameter;
using processing::IndexOutputs;
using processing::IntegerParameter;
using processing::NumberParameter;

constexpr std::string_view kName = "detect_postprocess";
constexpr int64_t kMaxBoxes = 100'000;          // N
constexpr int64_t kMaxCandidates = 10'000'000;  // N·C
constexpr int64_t kMaxDetections = 10'000;      // M
enum Output { kBoxes = 0, kScores = 1, kClasses = 2, kCount = 3 };

struct DetectOptions {
  int64_t num_boxes = 0;       // N
  int64_t num_classes = 0;     // C
  int64_t max_detections = 0;  // M
  bool cxcywh = false;
  double score_threshold = 0.25;
  double iou_threshold = 0.45;
  bool class_agnostic = false;
  int boxes_input = 0;  // index of `boxes` among the inputs (config order)
  std::vector<int> output_index;
};

absl::StatusOr<DetectOptions> ParseOptions(const inference::ModelConfig& config) {
  DetectOptions options;
  if (config.input_size() != 2) {
    return absl::InvalidArgumentError(StrCat(
        kName, ": needs exactly 2 inputs (boxes, scores); config has ", config.input_size()));
  }
  const inference::ModelInput* boxes = FindConfigInput(config, "boxes");
  const inference::ModelInput* scores = FindConfigInput(config, "scores");
  if (boxes == nullptr || scores == nullptr) {
    return absl::InvalidArgumentError(StrCat(kName, ": inputs must be named 'boxes' and 'scores'"));
  }
  options.boxes_input = boxes == &config.input(0) ? 0 : 1;
  RETURN_IF_ERROR(CheckTensor(kName, "input", "boxes", boxes->data_type(), boxes->dims(),
                              {inference::TYPE_FP32}, {-1, 4}));
  RETURN_IF_ERROR(CheckTensor(kName, "input", "scores", scores->data_type(), scores->dims(),
                              {inference::TYPE_FP32}, {-1, -1}));
  if (boxes->optional() || scores->optional()) {
    return absl::InvalidArgumentError(StrCat(kName, ": inputs cannot be optional"));
  }
  options.num_boxes = boxes->dims(0);
  options.num_classes = scores->dims(1);
  if (scores->dims(0) != options.num_boxes) {
    return absl::InvalidArgumentError(StrCat(kName, ": input 'scores' has ", scores->dims(0),
                                             " rows; 'boxes' has ", options.num_boxes));
  }
  if (options.num_boxes > kMaxBoxes || options.num_boxes * options.num_classes > kMaxCandidates) {
    return absl::InvalidArgumentError(StrCat(kName, ": ", options.num_boxes, " boxes x ",
                                             options.num_classes,
                                             " classes is over the limit (at most ", kMaxBoxes,
                                             " boxes and ", kMaxCandidates, " box-class pairs)"));
  }
  ASSIGN_OR_RETURN(
      options.output_index,
      IndexOutputs(config, kName, {"det_boxes", "det_scores", "det_classes", "num_detections"}));
  ASSIGN_OR_RETURN(std::optional<int64_t> m,
                   IntegerParameter(config, kName, "max_detections", 1, kMaxDetections));
  if (!m) {
    return absl::InvalidArgumentError(StrCat(kName, ": parameters[max_detections] is required"));
  }
  options.max_detections = *m;
  const std::vector<inference::DataType> types = {inference::TYPE_FP32, inference::TYPE_FP32,
                                                  inference::TYPE_INT64, inference::TYPE_INT64};
  const std::vector<std::vector<int64_t>> dims = {{*m, 4}, {*m}, {*m}, {1}};
  for (int k = 0; k < 4; ++k) {
    if (options.output_index[k] < 0) continue;
    const auto& output = config.output(options.output_index[k]);
    RETURN_IF_ERROR(CheckTensor(kName, "output", output.name(), output.data_type(), output.dims(),
                                {types[k]}, dims[k]));
  }
  ASSIGN_OR_RETURN(std::string format,
                   ChoiceParameter(config, kName, "box_format", {"xyxy", "cxcywh"}));
  options.cxcywh = format == "cxcywh";
  ASSIGN_OR_RETURN(options.score_threshold,
                   NumberParameter(config, kName, "score_threshold", 0.25, -1e30, 1e30));
  ASSIGN_OR_RETURN(options.iou_threshold,
                   NumberParameter(config, kName, "iou_threshold", 0.45, 0.0, 1.0));
  ASSIGN_OR_RETURN(options.class_agnostic, BoolParameter(config, kName, "class_agnostic", false));
  return options;
}

struct Candidate {
  float score;
  int32_t box;
  int32_t cls;
};

struct Box {
  float x1, y1, x2, y2;
  double area;  // 0 for degenerate boxes
};

double Iou(const Box& a, const Box& b) {
  if (a.area <= 0 || b.area <= 0) return 0;
  const double w = std::min<double>(a.x2, b.x2) - std::max<double>(a.x1, b.x1);
  const double h = std::min<double>(a.y2, b.y2) - std::max<double>(a.y1, b.y1);
  if (w <= 0 || h <= 0) return 0;
  const double inter = w * h;
  return inter / (a.area + b.area - inter);
}

class DetectInstance : public ModelInstance {
 public:
  DetectInstance(const inference::ModelConfig& config, const DetectOptions& options)
      : config_(config), options_(options) {}

  absl::StatusOr<std::vector<Tensor>> Execute(std::vector<Tensor> inputs, const ExecutionContext& /*context*/) override {
    if (inputs.size() != 2) {
      return absl::InvalidArgumentError(StrCat(kName, " needs 2 inputs, got ", inputs.size()));
    }
    const Tensor& boxes = inputs[options_.boxes_input];
    const Tensor& scores = inputs[1 - options_.boxes_input];
    const bool batched = config_.max_batch_size() > 0;
    const int64_t rows = batched && !boxes.shape.empty() ? boxes.shape[0] : 1;
    const int64_t n = options_.num_boxes;
    const int64_t c = options_.num_classes;
    const int64_t m = options_.max_detections;
    auto check = [&](const Tensor& t, Shape want) -> absl::Status {
      if (batched) want.insert(want.begin(), rows);
      if (t.dtype != DataType::kFp32 || t.shape != want ||
          t.data.size() != static_cast<size_t>(*ElementCount(want)) * sizeof(float)) {
        return absl::InvalidArgumentError(StrCat(kName, ": input '", t.name, "' is ",
                                                 DataTypeName(t.dtype), ShapeToString(t.shape),
                                                 "; expected FP32", ShapeToString(want)));
      }
      return absl::OkStatus();
    };
    RETURN_IF_ERROR(check(boxes, {n, 4}));
    RETURN_IF_ERROR(check(scores, {n, c}));

    uint8_t* bytes;
    Buffer out_boxes = Buffer::Allocate(rows * m * 4 * sizeof(float), &bytes);
    float* det_boxes = reinterpret_cast<float*>(bytes);
    Buffer out_scores = Buffer::Allocate(rows * m * sizeof(float), &bytes);
    float* det_scores = reinterpret_cast<float*>(bytes);
    Buffer out_classes = Buffer::Allocate(rows * m * sizeof(int64_t), &bytes);
    int64_t* det_classes = reinterpret_cast<int64_t*>(bytes);
    Buffer out_count = Buffer::Allocate(rows * sizeof(int64_t), &bytes);
    int64_t* num_detections = reinterpret_cast<int64_t*>(bytes);
    std::fill_n(det_boxes, rows * m * 4, 0.0f);
    std::fill_n(det_scores, rows * m, 0.0f);
    std::fill_n(det_classes, rows * m, int64_t{0});

    for (int64_t row = 0; row < rows; ++row) {
      num_detections[row] =
          Suppress(boxes.data.data() + row * n * 4 * sizeof(float),
                   scores.data.data() + row * n * c * sizeof(float), det_boxes + row * m * 4,
                   det_scores + row * m, det_classes + row * m);
    }

    std::vector<Tensor> outputs(config_.output_size());
    Buffer* buffers[4] = {&out_boxes, &out_scores, &out_classes, &out_count};
    const Shape shapes[4] = {{m, 4}, {m}, {m}, {1}};
    const DataType types[4] = {DataType::kFp32, DataType::kFp32, DataType::kInt64,
                               DataType::kInt64};
    for (int k = 0; k < 4; ++k) {
      const int at = options_.output_index[k];
      if (at < 0) continue;
      outputs[at].name = config_.output(at).name();
      outputs[at].dtype = types[k];
      outputs[at].shape = shapes[k];
      if (batched) outputs[at].shape.insert(outputs[at].shape.begin(), rows);
      outputs[at].data = std::move(*buffers[k]);
    }
    return outputs;
  }

 private:
  // One batch row: returns the number kept, written to the (zeroed) outputs.
  int64_t Suppress(const uint8_t* box_bytes, const uint8_t* score_bytes, float* out_boxes,
                   float* out_scores, int64_t* out_classes) {
    const int64_t n = options_.num_boxes;
    const int64_t c = options_.num_classes;
    const float threshold = static_cast<float>(options_.score_threshold);
    // Inputs may be unaligned views into a request body: copy rows out through memcpy.
    decoded_.resize(n);
    candidates_.clear();
    std::vector<float>& row = row_;
    row.resize(std::max<int64_t>(c, 4));
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(row.data(), box_bytes + i * 4 * sizeof(float), 4 * sizeof(float));
      Box& box = decoded_[i];
      if (options_.cxcywh) {
        box = {row[0] - row[2] / 2, row[1] - row[3] / 2, row[0] + row[2] / 2, row[1] + row[3] / 2,
               0};
      } else {
        box = {row[0], row[1], row[2], row[3], 0};
      }
      if (!std::isfinite(box.x1) || !std::isfinite(box.y1) || !std::isfinite(box.x2) ||
          !std::isfinite(box.y2)) {
        continue;  // undrawable: no candidate
      }
      const double w = static_cast<double>(box.x2) - box.x1;
      const double h = static_cast<double>(box.y2) - box.y1;
      box.area = w > 0 && h > 0 ? w * h : 0;
      std::memcpy(row.data(), score_bytes + i * c * sizeof(float), c * sizeof(float));
      if (options_.class_agnostic) {
        int32_t best = -1;
        for (int64_t k = 0; k < c; ++k) {
          if (!std::isnan(row[k]) && (best < 0 || row[k] > row[best]))
            best = static_cast<int32_t>(k);
        }
        if (best >= 0 && row[best] >= threshold) {
          candidates_.push_back({row[best], static_cast<int32_t>(i), best});
        }
      } else {
        for (int64_t k = 0; k < c; ++k) {
          if (row[k] >= threshold) {  // false for NaN
            candidates_.push_back({row[k], static_cast<int32_t>(i), static_cast<int32_t>(k)});
          }
        }
      }
    }
    // Visit in order through a heap: building it is O(P) and only the candidates visited
    // before max_detections are kept pay O(log P) each, where a full sort would pay it for
    // all P (a dense score map has hundreds of thousands).
    auto visits_later = [](const Candidate& a, const Candidate& b) {
      if (a.score != b.score) return a.score < b.score;
      if (a.box != b.box) return a.box > b.box;
      return a.cls > b.cls;
    };
    std::make_heap(candidates_.begin(), candidates_.end(), visits_later);
    kept_.clear();
    auto heap_end = candidates_.end();
    while (heap_end != candidates_.begin() &&
           static_cast<int64_t>(kept_.size()) < options_.max_detections) {
      std::pop_heap(candidates_.begin(), heap_end, visits_later);
      --heap_end;
      const Candidate candidate = *heap_end;
      const Box& box = decoded_[candidate.box];
      bool suppressed = false;
      for (const Candidate& other : kept_) {
        if (!options_.class_agnostic && other.cls != candidate.cls) continue;
        if (Iou(box, decoded_[other.box]) > options_.iou_threshold) {
          suppressed = true;
          break;
        }
      }
      if (suppressed) continue;
      const size_t j = kept_.size();
      kept_.push_back(candidate);
      out_boxes[4 * j + 0] = box.x1;
      out_boxes[4 * j + 1] = box.y1;
      out_boxes[4 * j + 2] = box.x2;
      out_boxes[4 * j + 3] = box.y2;
      out_scores[j] = candidate.score;
      out_classes[j] = candidate.cls;
    }
    return static_cast<int64_t>(kept_.size());
  }

  const inference::ModelConfig& config_;
  const DetectOptions& options_;
  // Scratch reused across executions (the instance is owned by one worker thread).
  std::vector<Box> decoded_;
  std::vector<Candidate> candidates_;
  std::vector<Candidate> kept_;
  std::vector<float> row_;
};

class DetectModel : public LoadedModel {
 public:
  DetectModel(const inference::ModelConfig& config, DetectOptions options)
      : config_(config), options_(std::move(options)) {}
  absl::StatusOr<std::unique_ptr<ModelInstance>> CreateInstance(const InstanceOptions&) override {
    return std::make_unique<DetectInstance>(config_, options_);
  }

 private:
  const inference::ModelConfig& config_;
  const DetectOptions options_;
};

class DetectPostprocessBackend : public Backend {
 public:
  std::string_view name() const override { return kName; }
  absl::Status ValidateConfig(const inference::ModelConfig& config) const override {
    return ParseOptions(config).status();
  }
  absl::StatusOr<std::unique_ptr<LoadedModel>> Load(const ModelLoadContext& context) override {
    ASSIGN_OR_RETURN(DetectOptions options, ParseOptions(*context.config));
    return std::make_unique<DetectModel>(*context.config, std::move(options));
  }
};

}  // namespace

std::unique_ptr<Backend> CreateDetectPostprocessBackend() {
  return std::make_unique<DetectPostprocessBackend>();
}

}  // namespace infera
