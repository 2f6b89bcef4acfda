// Fuzz target: sequences of model lifecycle operations against an in-process ModelManager
// (explicit mode) with the built-in backends (identity, fault_injection; no LibTorch):
// loads from the repository, loads with config overrides (ensembles whose steps name any
// model, themselves and each other included; canary and backend parameters from the
// input), unloads and infers, up to 32 per input on a fresh manager. (Each load starts
// and each unload joins a model's threads: tens of inputs a second, not thousands.)
//
// The repository (written once per process) holds identity models, ensembles over them,
// ensembles that name each other on disk (a cycle), and a chain of ensembles deeper than
// kMaxEnsembleDepth. Every model has input X and output Y (INT32 [4]), so generated
// ensembles are often valid and nest.
//
// Findings: a crash or sanitizer report, an infer that is not answered within 10 s (a
// hang or a lost callback: abort), a leak (LSan), and a broken invariant: a load refused
// as InvalidArgument must leave the same version object serving.
#include <fuzzer/FuzzedDataProvider.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "backend/backend_registry.h"
#include "backend/builtin/builtin_backends.h"
#include "common/logging.h"
#include "common/str_cat.h"
#include "google/protobuf/text_format.h"
#include "manager/model_manager.h"

namespace {

namespace fs = std::filesystem;
using infera::StrCat;

constexpr int kChain = 20;  // d0 -> d1 -> ... -> d19 -> m0: past the depth bound

const char* const kNames[] = {"m0", "m1", "f0", "e0", "e1", "loop_a", "loop_b", "d0", "d5", "d12", "d19", "nope"};

std::string Io(int max_batch_size) {
  return StrCat("max_batch_size: ", max_batch_size,
                " input [ { name: \"X\" data_type: TYPE_INT32 dims: [ 4 ] } ]"
                " output [ { name: \"Y\" data_type: TYPE_INT32 dims: [ 4 ] } ]\n");
}

std::string Step(const std::string& model, const std::string& in, const std::string& out, int version = -1) {
  return StrCat("{ model_name: \"", model, "\" model_version: ", version, " input_map { key: \"X\" value: \"", in,
                "\" } output_map { key: \"Y\" value: \"", out, "\" } }");
}

std::string Ensemble(const std::vector<std::string>& steps, int max_batch_size = 4) {
  std::string text = StrCat("platform: \"ensemble\"\n", Io(max_batch_size), "ensemble_scheduling { step [ ");
  for (size_t i = 0; i < steps.size(); ++i) text += StrCat(i ? ", " : "", steps[i]);
  return text + " ] }\n";
}

void Write(const fs::path& repo, const std::string& name, const std::string& config) {
  fs::create_directories(repo / name / "1");
  std::ofstream(repo / name / "config.pbtxt") << StrCat("name: \"", name, "\"\n", config);
}

const fs::path& Repository() {
  static const fs::path* repo = [] {
    auto* path = new fs::path(fs::temp_directory_path() / StrCat("infera_fuzz_lifecycle_", ::getpid()));
    fs::remove_all(*path);
    Write(*path, "m0", StrCat("backend: \"identity\"\n", Io(8)));
    Write(*path, "m1", StrCat("backend: \"identity\"\n", Io(4)));
    Write(*path, "f0", StrCat("backend: \"fault_injection\"\n", Io(8),
                              "parameters { key: \"failure_rate\" value { string_value: \"0.5\" } }\n"));
    Write(*path, "e0", Ensemble({Step("m0", "X", "t"), Step("m1", "t", "Y")}));
    Write(*path, "e1", Ensemble({Step("e0", "X", "Y")}));
    Write(*path, "loop_a", Ensemble({Step("loop_b", "X", "Y")}));
    Write(*path, "loop_b", Ensemble({Step("loop_a", "X", "Y")}));
    for (int i = 0; i < kChain; ++i) {
      Write(*path, StrCat("d", i), Ensemble({Step(i + 1 < kChain ? StrCat("d", i + 1) : "m0", "X", "Y")}));
    }
    std::atexit([] { fs::remove_all(fs::temp_directory_path() / StrCat("infera_fuzz_lifecycle_", ::getpid())); });
    return path;
  }();
  return *repo;
}

const infera::BackendRegistry& Backends() {
  static const infera::BackendRegistry* registry = [] {
    auto* r = new infera::BackendRegistry;
    r->Register(infera::CreateIdentityBackend());
    r->Register(infera::CreateFaultInjectionBackend());
    return r;
  }();
  return *registry;
}

// `raw` as the body of a text-format string literal (C escapes).
std::string Quote(const std::string& raw) {
  std::string out;
  for (unsigned char c : raw) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char octal[5];
      std::snprintf(octal, sizeof(octal), "\\%03o", c);
      out += octal;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string PickName(FuzzedDataProvider& in) {
  return kNames[in.ConsumeIntegralInRange<size_t>(0, std::size(kNames) - 1)];
}

// An override for `name`: an identity or fault_injection model, or an ensemble of 1 to 3
// steps in a row naming any model; datatypes, batch sizes and parameters vary. (One
// value is taken per statement: the order of the input's use must not depend on the
// compiler's order of evaluating arguments, or seeds would mean other things.)
std::string OverrideText(FuzzedDataProvider& in, const std::string& name) {
  const int max_batch_size = in.PickValueInArray({0, 4, 8, 1});
  std::string text = StrCat("name: \"", name, "\"\n");
  const int kind = in.ConsumeIntegralInRange(0, 3);
  if (kind == 0) {
    text += StrCat("backend: \"identity\"\n", Io(max_batch_size));
  } else if (kind == 1) {
    const std::string delay = in.PickValueInArray({"0", "1", "nan", "inf", "-1", "1e9"});
    const std::string failure_rate = Quote(in.ConsumeRandomLengthString(16));
    text += StrCat("backend: \"fault_injection\"\n", Io(max_batch_size),
                   "parameters { key: \"delay_ms\" value { string_value: \"", delay, "\" } }\n",
                   "parameters { key: \"failure_rate\" value { string_value: \"", failure_rate, "\" } }\n");
  } else {
    const int steps = in.ConsumeIntegralInRange(1, 3);
    std::vector<std::string> list;
    for (int s = 0; s < steps; ++s) {
      const std::string model = PickName(in);
      const int version = in.PickValueInArray({-1, -1, 1, 2});
      list.push_back(Step(model, s == 0 ? "X" : StrCat("t", s - 1), s + 1 == steps ? "Y" : StrCat("t", s), version));
    }
    text += Ensemble(list, max_batch_size);
  }
  if (in.ConsumeBool()) {  // a canary, with a value from the input
    const std::string key = in.PickValueInArray(
        {"weight_percent", "min_requests", "window_secs", "max_p99_increase_percent", "typo"});
    const std::string value = Quote(in.ConsumeRandomLengthString(12));
    text += StrCat("parameters { key: \"canary.version\" value { string_value: \"1\" } }\n",
                   "parameters { key: \"canary.", key, "\" value { string_value: \"", value, "\" } }\n");
  }
  if (in.ConsumeBool()) {
    const std::string dtype = in.PickValueInArray({"TYPE_FP32", "TYPE_INT64", "TYPE_INT32"});
    text.replace(text.find("TYPE_INT32"), 10, dtype);
  }
  return text;
}

// One infer of `name`, waited for; aborts when it is not answered in time.
absl::StatusOr<infera::InferResponse> Infer(infera::ModelManager& manager, const std::string& name) {
  auto version = manager.GetModelVersion(name, std::nullopt);
  if (!version.ok()) return version.status();
  infera::InferRequest request;
  request.model_name = name;
  const std::vector<int32_t> values = {1, 2, 3, 4};
  infera::Tensor x{"X", infera::DataType::kInt32, {4}, infera::Buffer::Copy(values.data(), 16)};
  if ((*version)->config().max_batch_size() > 0) x.shape = {1, 4};
  request.inputs.push_back(std::move(x));
  request.arrival_time = std::chrono::steady_clock::now();
  auto done = std::make_shared<absl::Notification>();
  auto result = std::make_shared<absl::StatusOr<infera::InferResponse>>(absl::UnknownError("unanswered"));
  (*version)->Infer(std::move(request), [done, result](absl::StatusOr<infera::InferResponse> r,
                                                        infera::ResponseDelivery delivery) {
    if (!delivery.final) return;  // no model here is decoupled: its one answer is final
    *result = std::move(r);
    done->Notify();
  });
  version->reset();  // the handle: a later unload must not wait for it
  if (!done->WaitForNotificationWithTimeout(absl::Seconds(10))) {
    std::fprintf(stderr, "infer of '%s' was not answered in 10 s\n", name.c_str());
    std::abort();
  }
  return *result;
}

// The version 1 object that serves `name`, or null (compared only, never used).
const infera::ModelVersion* Serving(infera::ModelManager& manager, const std::string& name) {
  auto version = manager.GetModelVersion(name, 1);
  return version.ok() ? version->get() : nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Below kError: not even errors (most generated loads fail, each logging a line);
  // FUZZ_LOG=1 keeps the log, to see what an input does.
  const char* log = std::getenv("FUZZ_LOG");
  if (log == nullptr || std::string(log) != "1") {
    infera::logging_internal::g_log_level.store(-1, std::memory_order_relaxed);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  infera::ModelManager::Options options;
  options.repository = Repository();
  options.backends = &Backends();
  options.mode = infera::ModelControlMode::kExplicit;
  options.max_queue_size = 16;
  options.drain_timeout = std::chrono::seconds(10);
  auto manager = infera::ModelManager::Create(std::move(options));
  if (!manager.ok()) std::abort();
  (*manager)->LoadAll();
  for (int op = 0; op < 32 && in.remaining_bytes() > 0; ++op) {
    const std::string name = PickName(in);
    switch (in.ConsumeIntegralInRange(0, 3)) {
      case 0:
        (*manager)->LoadModel(name).IgnoreError();
        break;
      case 1: {
        inference::ModelConfig config;
        if (!google::protobuf::TextFormat::ParseFromString(OverrideText(in, name), &config)) break;
        // (A handle is not held across the load: a successful one would wait for it.)
        const infera::ModelVersion* before = Serving(**manager, name);
        absl::Status loaded = (*manager)->LoadModel(name, std::move(config));
        // A refused override changes nothing: the same version object serves.
        if (loaded.code() == absl::StatusCode::kInvalidArgument && Serving(**manager, name) != before) {
          std::fprintf(stderr, "a refused override of '%s' changed what serves: %s\n", name.c_str(),
                       std::string(loaded.message()).c_str());
          std::abort();
        }
        break;
      }
      case 2:
        (*manager)->UnloadModel(name).IgnoreError();
        break;
      default:
        Infer(**manager, name).IgnoreError();
        break;
    }
  }
  (*manager)->UnloadAll();
  return 0;
}
