// Cost of the post-processing backends (backend/processing: classify, detect_postprocess,
// pool) per execution at typical model sizes, in-process (Google Benchmark). The figures
// in docs/pipelines.md ("Measured") come from this.
#include <google/protobuf/text_format.h>

#include <cstring>
#include <random>

#include "backend/processing/processing_backends.h"
#include "benchmark/benchmark.h"

namespace infera {
namespace {

struct Fixture {
  inference::ModelConfig config;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<LoadedModel> model;
  std::unique_ptr<ModelInstance> instance;
};

std::unique_ptr<Fixture> Make(std::unique_ptr<Backend> backend, const std::string& text) {
  auto f = std::make_unique<Fixture>();
  if (!google::protobuf::TextFormat::ParseFromString(text, &f->config)) std::abort();
  f->backend = std::move(backend);
  if (!f->backend->ValidateConfig(f->config).ok()) std::abort();
  ModelLoadContext context;
  context.config = &f->config;
  f->model = std::move(f->backend->Load(context)).value();
  f->instance = std::move(f->model->CreateInstance({})).value();
  return f;
}

Tensor Floats(const std::string& name, Shape shape, std::vector<float> values) {
  uint8_t* data;
  Buffer buffer = Buffer::Allocate(values.size() * sizeof(float), &data);
  std::memcpy(data, values.data(), values.size() * sizeof(float));
  return Tensor{name, DataType::kFp32, std::move(shape), std::move(buffer)};
}

void Run(benchmark::State& state, ModelInstance& instance, const std::vector<Tensor>& inputs) {
  for (auto _ : state) {
    auto out = instance.Execute(inputs);  // tensors share their buffers: no copy
    if (!out.ok()) std::abort();
    benchmark::DoNotOptimize(out);
  }
}

// ResNet-style logits: C = 1000, top 5 with softmax.
void BM_Classify1000Top5Softmax(benchmark::State& state) {
  auto f = Make(CreateClassifyBackend(),
                "input { name: \"x\" data_type: TYPE_FP32 dims: [1000] }"
                " output { name: \"scores\" data_type: TYPE_FP32 dims: [5] }"
                " output { name: \"indices\" data_type: TYPE_INT64 dims: [5] }"
                " parameters { key: \"top_k\" value { string_value: \"5\" } }"
                " parameters { key: \"softmax\" value { string_value: \"true\" } }");
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0, 3);
  std::vector<float> logits(1000);
  for (float& v : logits) v = normal(rng);
  Run(state, *f->instance, {Floats("x", {1000}, logits)});
}
BENCHMARK(BM_Classify1000Top5Softmax);

// YOLOv8 at 640x640: N = 8400 candidates, C = 80 classes, 100 detections. Arg 0: sparse
// scores (about 1% of the box-class pairs pass 0.25, as a trained head); arg 1: every
// pair passes (the worst case the caps bound: 672,000 candidates).
void BM_DetectPostprocess8400x80(benchmark::State& state) {
  auto f = Make(CreateDetectPostprocessBackend(),
                "input { name: \"boxes\" data_type: TYPE_FP32 dims: [8400, 4] }"
                " input { name: \"scores\" data_type: TYPE_FP32 dims: [8400, 80] }"
                " output { name: \"det_boxes\" data_type: TYPE_FP32 dims: [100, 4] }"
                " output { name: \"det_scores\" data_type: TYPE_FP32 dims: [100] }"
                " output { name: \"det_classes\" data_type: TYPE_INT64 dims: [100] }"
                " output { name: \"num_detections\" data_type: TYPE_INT64 dims: [1] }"
                " parameters { key: \"max_detections\" value { string_value: \"100\" } }"
                " parameters { key: \"box_format\" value { string_value: \"cxcywh\" } }");
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> unit(0, 1);
  std::vector<float> boxes(8400 * 4), scores(8400 * 80);
  for (size_t i = 0; i < 8400; ++i) {
    boxes[4 * i] = 640 * unit(rng);
    boxes[4 * i + 1] = 640 * unit(rng);
    boxes[4 * i + 2] = 8 + 120 * unit(rng);
    boxes[4 * i + 3] = 8 + 120 * unit(rng);
  }
  const bool dense = state.range(0) == 1;
  for (float& s : scores)
    s = dense ? 0.25f + 0.75f * unit(rng)
              : (unit(rng) < 0.01f ? 0.3f + 0.7f * unit(rng) : 0.2f * unit(rng));
  Run(state, *f->instance,
      {Floats("boxes", {8400, 4}, boxes), Floats("scores", {8400, 80}, scores)});
}
BENCHMARK(BM_DetectPostprocess8400x80)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// BERT-base token embeddings: L = 128, D = 768, masked mean + L2, batch of 8.
void BM_PoolMean128x768Batch8(benchmark::State& state) {
  auto f = Make(CreatePoolBackend(),
                "max_batch_size: 8"
                " input { name: \"token_embeddings\" data_type: TYPE_FP32 dims: [128, 768] }"
                " output { name: \"embedding\" data_type: TYPE_FP32 dims: [768] }");
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0, 1);
  std::vector<float> e(8 * 128 * 768);
  for (float& v : e) v = normal(rng);
  Run(state, *f->instance, {Floats("token_embeddings", {8, 128, 768}, e)});
}
BENCHMARK(BM_PoolMean128x768Batch8)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace infera

BENCHMARK_MAIN();
