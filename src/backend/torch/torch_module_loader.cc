// LibTorch first: torch_tensor.h only forward-declares at::Tensor.
#include <caffe2/serialize/read_adapter_interface.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include "backend/torch/torch_module_loader.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "backend/torch/torch_errors.h"
#include "backend/torch/torch_precision.h"
#include "common/logging.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

// GRAPH_EXECUTOR (torch_options.h): whether `module`'s methods get the simple executor.
// `auto` picks it for a frozen module: freezing and optimize_for_inference already ran
// the graph passes, and what the profiling executor adds — a profiled first run, then a
// second compilation — yields the same graph on CPU (measured for every demo model:
// docs/cold_start.md, "Second step"), only a slower first run and a second one that
// compiles.
bool UseSimpleExecutor(const TorchModelOptions& options, bool frozen) {
  switch (options.graph_executor) {
    case GraphExecutor::kSimple: return true;
    case GraphExecutor::kProfiling: return false;
    case GraphExecutor::kAuto: return frozen;
  }
  return false;
}

// Chooses the executor of each method of `module` (not of its submodules: a frozen
// forward() has them inlined, and an unfrozen one inlines their code into its own
// graph). LibTorch creates a method's executor at its first call, so this must run
// before any; a module that shares its methods with another (a copy of the handle)
// shares the choice.
absl::Status SetSimpleExecutor(torch::jit::Module& module) {
  return CatchTorchErrors(absl::StatusCode::kInternal, "choosing the graph executor failed", [&] {
    for (const torch::jit::Method& method : module.get_methods()) {
      torch::jit::toGraphFunction(method.function())
          ._set_initial_executor_execution_mode(torch::jit::ExecutorExecutionMode::SIMPLE);
    }
    return absl::OkStatus();
  });
}

// Converts a loaded module to `options.precision` (docs/optimisation.md): bf16/fp16
// weights before freezing (freeze turns parameters into graph constants, which .to()
// would miss); int8_dynamic freezes and rewrites Linear layers. A failure is an error:
// a module that cannot run at the asked precision must not serve as fp32.
absl::Status ApplyPrecision(const TorchModelOptions& options, torch::jit::Module& module,
                            LoadFacts* facts) {
  const std::string what = StrCat("PRECISION ", PrecisionName(options.precision));
  switch (options.precision) {
    case Precision::kFp32:
      return absl::OkStatus();
    case Precision::kBf16:
    case Precision::kFp16:
      return CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                      StrCat(what, ": converting the weights failed"), [&] {
                        module.to(options.precision == Precision::kBf16 ? at::kBFloat16
                                                                        : at::kHalf);
                        // oneDNN's reduced-precision convolutions want NHWC: 4-D
                        // weights (and inputs, at the boundary) go channels-last
                        // (docs/optimisation.md has the measurement).
                        torch::NoGradGuard no_grad;
                        for (at::Tensor parameter : module.parameters()) {
                          if (parameter.dim() == 4) {
                            parameter.set_data(
                                parameter.contiguous(at::MemoryFormat::ChannelsLast));
                          }
                        }
                        return absl::OkStatus();
                      });
    case Precision::kInt8Dynamic: {
      RETURN_IF_ERROR(SelectQuantizedEngine().status());
      RETURN_IF_ERROR(CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                               StrCat(what, ": torch::jit::freeze failed"), [&] {
                                 module = torch::jit::freeze(module);
                                 return absl::OkStatus();
                               }));
      ASSIGN_OR_RETURN(facts->quantized_layers, QuantizeLinearDynamic(module));
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

// A TorchScript file mapped into memory (read-only, pages populated up front), for
// torch::jit::load: reading the file and deserialising it are timed apart, and the
// bytes are not copied on the way (only into the tensors, as a file read would).
class MappedFile final : public caffe2::serialize::ReadAdapterInterface {
 public:
  // Null when the file cannot be opened or mapped (torch::jit::load(path) then says why).
  static std::shared_ptr<MappedFile> Open(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return nullptr;
    struct stat st {};
    void* data = MAP_FAILED;
    if (::fstat(fd, &st) == 0 && st.st_size > 0) {
      data = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    }
    ::close(fd);
    if (data == MAP_FAILED) return nullptr;
    return std::shared_ptr<MappedFile>(new MappedFile(static_cast<const char*>(data), static_cast<size_t>(st.st_size)));
  }
  ~MappedFile() override { ::munmap(const_cast<char*>(data_), size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  size_t size() const override { return size_; }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= size_) return 0;
    n = std::min<size_t>(n, size_ - pos);
    std::memcpy(buf, data_ + pos, n);
    return n;
  }
  // TorchScript's format is a zip archive; anything else is loaded by name.
  bool IsZip() const { return size_ >= 4 && std::memcmp(data_, "PK\x03\x04", 4) == 0; }

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* const data_;
  const size_t size_;
};

// LoadModule's "optimise" stage: the precision, then freeze + optimize_for_inference when
// asked (a failure there keeps the plain module, with a warning).
absl::StatusOr<torch::jit::Module> OptimiseModule(const std::filesystem::path& path,
                                                  const TorchModelOptions& options,
                                                  torch::jit::Module module, LoadFacts* facts) {
  RETURN_IF_ERROR(ApplyPrecision(options, module, facts));
  if (!options.optimize_for_inference) return module;
  const bool frozen_already = options.precision == Precision::kInt8Dynamic;
  // freeze() clones, so a failure part-way leaves `module` usable.
  absl::StatusOr<torch::jit::Module> frozen =
      CatchTorchErrors(absl::StatusCode::kInternal, "freeze + optimize_for_inference failed",
               [&]() -> absl::StatusOr<torch::jit::Module> {
                 torch::jit::Module out = frozen_already ? module : torch::jit::freeze(module);
                 return torch::jit::optimize_for_inference(out);
               });
  if (!frozen.ok()) {
    INFERA_LOG(WARNING) << "pytorch: " << path.string() << ": " << frozen.status().message()
                        << "; serving the plain module (OPTIMIZE_FOR_INFERENCE: false "
                           "silences this)";
    return module;
  }
  facts->optimized = true;
  return *std::move(frozen);
}

}  // namespace

// Loads `path` onto the CPU, in eval mode, at the configured precision, optimised when
// asked; `facts` (may be null) reports what was done, `timings` (may be null) the
// stages: "read" (the file mapped into memory), "deserialise" (torch::jit::load from it),
// "optimise" (precision, freeze, optimize_for_inference).
absl::StatusOr<torch::jit::Module> LoadModule(const std::filesystem::path& path,
                                              const TorchModelOptions& options,
                                              LoadFacts* facts, LoadTimings* timings) {
  LoadFacts ignored;
  if (facts == nullptr) facts = &ignored;
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(StrCat("model file '", path.string(), "' does not exist"));
  }
  auto stage_start = std::chrono::steady_clock::now();
  auto end_stage = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    if (timings != nullptr) timings->AddStage(name, now - stage_start);
    stage_start = now;
  };
  std::shared_ptr<MappedFile> mapped = MappedFile::Open(path);
  // Only a zip archive (TorchScript's format) is deserialised from memory; anything
  // else goes to torch::jit::load(path) as before, which knows the other formats.
  const bool zip = mapped != nullptr && mapped->IsZip();
  end_stage("read");
  torch::jit::Module module;
  absl::Status loaded = CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                                 StrCat("cannot load TorchScript model file '", path.string(), "'"),
                                 [&] {
                                   if (zip) {
                                     module = torch::jit::load(mapped, torch::kCPU);
                                   } else {
                                     module = torch::jit::load(path.string(), torch::kCPU);
                                   }
                                   module.eval();
                                   return absl::OkStatus();
                                 });
  if (!loaded.ok() && zip) {
    // The error message of a bad archive is the one loading the file by name gives.
    loaded = CatchTorchErrors(absl::StatusCode::kInvalidArgument,
                              StrCat("cannot load TorchScript model file '", path.string(), "'"), [&] {
                                module = torch::jit::load(path.string(), torch::kCPU);
                                module.eval();
                                return absl::OkStatus();
                              });
  }
  mapped.reset();
  end_stage("deserialise");
  if (!loaded.ok() && loaded.message().find("constants.pkl") != std::string_view::npos) {
    // The usual mistake: a zip written by torch.save(), not torch.jit.save().
    return absl::InvalidArgumentError(StrCat(
        loaded.message(), " (written by torch.save()? The pytorch backend needs "
        "torch.jit.save() of a traced or scripted module)"));
  }
  RETURN_IF_ERROR(loaded);
  absl::StatusOr<torch::jit::Module> optimised = OptimiseModule(path, options, std::move(module), facts);
  if (optimised.ok() &&
      UseSimpleExecutor(options, facts->optimized || options.precision == Precision::kInt8Dynamic)) {
    RETURN_IF_ERROR(SetSimpleExecutor(*optimised));
    facts->simple_executor = true;
  }
  end_stage("optimise");
  return optimised;
}

}  // namespace infera
