#include "shm/shared_memory_binding.h"

#include <utility>

#include "api/tensor.h"
#include "common/checked_math.h"
#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

struct RegionRange {
  std::shared_ptr<const SharedMemoryRegion> region;
  uint64_t offset = 0;
  uint64_t byte_size = 0;
  bool offset_given = false;
};

// Reads the three parameters of `what` ("input 'x'" / "output 'y'") and checks the range
// against the region.
absl::StatusOr<RegionRange> ResolveRange(const SharedMemoryRegistry* registry,
                                         const Parameters& parameters, const std::string& what) {
  std::optional<std::string> name = GetStringParameter(parameters, kShmRegionParameter);
  if (!name) {
    return absl::InvalidArgumentError(
        StrCat("parameter '", kShmRegionParameter, "' of ", what, " must be a string"));
  }
  std::optional<int64_t> byte_size = GetIntParameter(parameters, kShmByteSizeParameter);
  if (!byte_size || *byte_size < 0) {
    return absl::InvalidArgumentError(StrCat(what, " names shared memory region '", *name,
                                             "' and needs parameter '", kShmByteSizeParameter,
                                             "' as a non-negative integer"));
  }
  RegionRange range;
  range.byte_size = static_cast<uint64_t>(*byte_size);
  if (parameters.count(kShmOffsetParameter) > 0) {
    std::optional<int64_t> offset = GetIntParameter(parameters, kShmOffsetParameter);
    if (!offset || *offset < 0) {
      return absl::InvalidArgumentError(StrCat("parameter '", kShmOffsetParameter, "' of ", what,
                                               " must be a non-negative integer"));
    }
    range.offset = static_cast<uint64_t>(*offset);
    range.offset_given = true;
  }
  if (registry == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(what, " names shared memory region '", *name,
               "' but this server has no shared-memory registry"));
  }
  absl::StatusOr<std::shared_ptr<const SharedMemoryRegion>> region = registry->Find(*name);
  if (!region.ok()) {
    return absl::InvalidArgumentError(StrCat(region.status().message(), " (", what, ")"));
  }
  range.region = *std::move(region);
  // Triton's texts first (clients match them), then the numbers. Both values are
  // non-negative int64s and offset < size: the sum cannot wrap in uint64.
  const uint64_t size = range.region->byte_size();
  if (range.offset >= size) {
    return absl::InvalidArgumentError(StrCat("Invalid offset for shared memory region: '", *name, "' (", what,
                                             ": offset ", range.offset, ", the region has ", size,
                                             " bytes)"));
  }
  if (range.offset + range.byte_size > size) {
    return absl::InvalidArgumentError(StrCat("Invalid offset + byte size for shared memory region: '", *name,
                                             "' (", what, ": offset ", range.offset, " + byte_size ",
                                             range.byte_size, " is past the region's ", size, " bytes)"));
  }
  return range;
}

// Checks an input naming a region: no data of its own, a range inside the region, and
// for a fixed-size datatype exactly the bytes its shape needs.
absl::StatusOr<RegionRange> ResolveInput(const SharedMemoryRegistry* registry,
                                         const Parameters& parameters, const Tensor& input) {
  const std::string what = StrCat("input '", input.name, "'");
  if (!input.data.empty()) {
    return absl::InvalidArgumentError(
        StrCat(what, " has both data and a '", kShmRegionParameter, "' parameter"));
  }
  ASSIGN_OR_RETURN(RegionRange range, ResolveRange(registry, parameters, what));
  if (input.dtype != DataType::kBytes) {
    const size_t element_size = DataTypeByteSize(input.dtype);
    const std::optional<int64_t> count = ElementCount(input.shape);
    const std::optional<int64_t> needed =
        count ? CheckedMul(*count, static_cast<int64_t>(element_size)) : std::nullopt;
    if (!needed || static_cast<uint64_t>(*needed) != range.byte_size) {
      return absl::InvalidArgumentError(StrCat(
          what, " has ", kShmByteSizeParameter, " ", range.byte_size, " but ",
          DataTypeName(input.dtype), " shape ", ShapeToString(input.shape), " needs ",
          needed ? StrCat(*needed) : std::string("more than int64 can count"), " bytes"));
    }
  }
  return range;
}

// Copies the input's bytes out of the region now, before the request is queued: nothing
// the client does to its object afterwards (rewrite, shrink, unlink) can reach the
// request.
absl::Status CopyInput(const RegionRange& range, Tensor& input) {
  const size_t size = static_cast<size_t>(range.byte_size);
  uint8_t* bytes = nullptr;
  Buffer data = Buffer::Allocate(size, &bytes);  // 64-byte aligned: any element type
  if (absl::Status read = range.region->Read(range.offset, size, bytes); !read.ok()) {
    return absl::InvalidArgumentError(StrCat("input '", input.name, "': ", read.message()));
  }
  input.data = std::move(data);
  if (input.dtype == DataType::kBytes) {
    // Parsed from the copy: the client may rewrite the region at any time.
    if (absl::Status valid = ValidateTensorData(input); !valid.ok()) {
      return absl::InvalidArgumentError(
          StrCat("input '", input.name, "' in shared memory: ", valid.message()));
    }
  }
  return absl::OkStatus();
}

// Every input naming a region, checked first and then copied, so a request over the
// registry's byte limit is refused before anything is allocated.
absl::Status BindInputs(const SharedMemoryRegistry* registry, InferRequest& request,
                        std::vector<std::shared_ptr<const SharedMemoryRegion>>& held) {
  if (request.input_parameters.empty()) return absl::OkStatus();
  if (request.input_parameters.size() != request.inputs.size()) {
    return absl::InternalError("input parameters do not match the inputs");
  }
  std::vector<std::pair<size_t, RegionRange>> bound;
  uint64_t total = 0;
  for (size_t i = 0; i < request.inputs.size(); ++i) {
    if (!NamesSharedMemoryRegion(request.input_parameters[i])) continue;
    ASSIGN_OR_RETURN(RegionRange range,
                     ResolveInput(registry, request.input_parameters[i], request.inputs[i]));
    if (range.byte_size > registry->max_request_bytes() - total) {
      return absl::InvalidArgumentError(
          StrCat("input '", request.inputs[i].name,
                 "': the request's inputs in shared memory exceed the limit of ",
                 registry->max_request_bytes(), " bytes per request"));
    }
    total += range.byte_size;
    bound.emplace_back(i, std::move(range));
  }
  for (const auto& [index, range] : bound) RETURN_IF_ERROR(CopyInput(range, request.inputs[index]));
  // The regions stay in use (listed after an unregister) until the request ends, as in
  // Triton, though their bytes were copied.
  for (auto& [index, range] : bound) held.push_back(std::move(range.region));
  return absl::OkStatus();
}

}  // namespace

bool NamesSharedMemoryRegion(const Parameters& parameters) {
  return parameters.count(kShmRegionParameter) > 0;
}

absl::StatusOr<SharedMemoryOutputs> BindSharedMemory(const SharedMemoryRegistry* registry,
                                                     InferRequest& request) {
  SharedMemoryOutputs outputs;
  RETURN_IF_ERROR(BindInputs(registry, request, outputs.inputs_held_));
  for (const RequestedOutput& output : request.outputs) {
    if (!NamesSharedMemoryRegion(output.parameters)) continue;
    const std::string what = StrCat("output '", output.name, "'");
    ASSIGN_OR_RETURN(RegionRange range, ResolveRange(registry, output.parameters, what));
    // Fail before the model runs when the object already shrank (Write checks again).
    if (absl::Status held = range.region->CheckObjectSize(); !held.ok()) {
      return absl::InvalidArgumentError(StrCat(what, ": ", held.message()));
    }
    outputs.bindings_.push_back(SharedMemoryOutputs::Binding{
        output.name, std::move(range.region), range.offset, range.byte_size, range.offset_given});
  }
  return outputs;
}

absl::Status SharedMemoryOutputs::WriteInto(InferResponse& response) const {
  if (bindings_.empty()) return absl::OkStatus();
  response.shared_memory_outputs.resize(response.outputs.size());
  for (const Binding& binding : bindings_) {
    size_t index = 0;
    while (index < response.outputs.size() && response.outputs[index].name != binding.output) {
      ++index;
    }
    if (index == response.outputs.size()) {
      return absl::InternalError(
          StrCat("model '", response.model_name, "' did not produce output '", binding.output, "'"));
    }
    Tensor& output = response.outputs[index];
    if (absl::Status valid = ValidateTensorData(output); !valid.ok()) {
      return absl::InternalError(StrCat("cannot write output '", output.name, "' of model '",
                                        response.model_name, "': ", valid.message()));
    }
    if (output.data.size() > binding.byte_size) {
      return absl::InvalidArgumentError(StrCat(
          "shared memory size specified with the request for output '", output.name, "' (",
          binding.byte_size, " bytes) should be at least ", output.data.size(),
          " bytes to hold the results"));
    }
    if (!output.data.empty()) {
      if (absl::Status written =
              binding.region->Write(binding.offset, output.data.data(), output.data.size());
          !written.ok()) {
        return absl::InvalidArgumentError(StrCat("output '", output.name, "': ", written.message()));
      }
    }
    Parameters echo;
    echo.emplace(kShmRegionParameter, binding.region->info().name);
    echo.emplace(kShmByteSizeParameter, static_cast<int64_t>(output.data.size()));
    if (binding.offset_given) echo.emplace(kShmOffsetParameter, static_cast<int64_t>(binding.offset));
    response.shared_memory_outputs[index] = std::move(echo);
    output.data = Buffer();
  }
  return absl::OkStatus();
}

}  // namespace infera
