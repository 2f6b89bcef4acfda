#include "shm/shared_memory_binding.h"

#include <cstring>
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
  const std::optional<int64_t> end =
      CheckedAdd(static_cast<int64_t>(range.offset), static_cast<int64_t>(range.byte_size));
  if (!end || static_cast<uint64_t>(*end) > range.region->byte_size()) {
    return absl::InvalidArgumentError(StrCat(
        what, ": shared memory offset ", range.offset, " + byte_size ", range.byte_size,
        " is past the end of region '", *name, "' (", range.region->byte_size(), " bytes)"));
  }
  if (absl::Status mapped = range.region->CheckStillMapped(); !mapped.ok()) {
    return absl::InvalidArgumentError(StrCat(what, ": ", mapped.message()));
  }
  return range;
}

absl::Status BindInput(const SharedMemoryRegistry* registry, const Parameters& parameters,
                       Tensor& input) {
  const std::string what = StrCat("input '", input.name, "'");
  if (!input.data.empty()) {
    return absl::InvalidArgumentError(
        StrCat(what, " has both data and a '", kShmRegionParameter, "' parameter"));
  }
  ASSIGN_OR_RETURN(RegionRange range, ResolveRange(registry, parameters, what));
  const uint8_t* bytes = range.region->data() + range.offset;
  const size_t size = static_cast<size_t>(range.byte_size);
  if (input.dtype == DataType::kBytes) {
    // Copied first, then parsed: the client may rewrite the region at any time.
    input.data = Buffer::Copy(bytes, size);
    absl::Status valid = ValidateTensorData(input);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(StrCat(what, " in shared memory: ", valid.message()));
    }
    return absl::OkStatus();
  }
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
  if (element_size != 0 && reinterpret_cast<uintptr_t>(bytes) % element_size == 0) {
    // Zero-copy: the Buffer owns a reference on the region, so the mapping outlives an
    // unregister until the request lets go of its tensors.
    input.data = Buffer::View(range.region, bytes, size);
  } else {
    input.data = Buffer::Copy(bytes, size);
  }
  return absl::OkStatus();
}

}  // namespace

bool NamesSharedMemoryRegion(const Parameters& parameters) {
  return parameters.count(kShmRegionParameter) > 0;
}

absl::StatusOr<SharedMemoryOutputs> BindSharedMemory(const SharedMemoryRegistry* registry,
                                                     InferRequest& request) {
  if (!request.input_parameters.empty()) {
    if (request.input_parameters.size() != request.inputs.size()) {
      return absl::InternalError("input parameters do not match the inputs");
    }
    for (size_t i = 0; i < request.inputs.size(); ++i) {
      if (!NamesSharedMemoryRegion(request.input_parameters[i])) continue;
      RETURN_IF_ERROR(BindInput(registry, request.input_parameters[i], request.inputs[i]));
    }
  }
  SharedMemoryOutputs outputs;
  for (const RequestedOutput& output : request.outputs) {
    if (!NamesSharedMemoryRegion(output.parameters)) continue;
    const std::string what = StrCat("output '", output.name, "'");
    ASSIGN_OR_RETURN(RegionRange range, ResolveRange(registry, output.parameters, what));
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
    if (absl::Status mapped = binding.region->CheckStillMapped(); !mapped.ok()) {
      return absl::InvalidArgumentError(StrCat("output '", output.name, "': ", mapped.message()));
    }
    if (!output.data.empty()) {
      std::memcpy(binding.region->data() + binding.offset, output.data.data(), output.data.size());
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
