#include "scheduling/batch_assembler.h"

#include <cstring>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera {
namespace {

// Byte offsets of each row of a BYTES tensor with `rows` rows (rows + 1 entries).
absl::StatusOr<std::vector<size_t>> BytesRowOffsets(const Tensor& tensor, int64_t rows) {
  ASSIGN_OR_RETURN(std::vector<std::string_view> elements,
                   SplitBytesElements(tensor.data.AsStringView()));
  if (rows == 0 || elements.size() % rows != 0) {
    return absl::InternalError(StrCat("output '", tensor.name, "' has ", elements.size(),
                                      " elements, not a multiple of its ", rows, " rows"));
  }
  const size_t per_row = elements.size() / rows;
  std::vector<size_t> offsets{0};
  const char* base = reinterpret_cast<const char*>(tensor.data.data());
  for (int64_t r = 1; r <= rows; ++r) {
    const std::string_view last = elements[r * per_row - 1];
    offsets.push_back(static_cast<size_t>(last.data() + last.size() - base));
  }
  return offsets;
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> GatherBatchInputs(ScheduledRequests& requests) {
  if (requests.size() == 1) return std::move(requests[0]->request.inputs);
  const std::vector<Tensor>& first = requests[0]->request.inputs;
  std::vector<Tensor> batch;
  batch.reserve(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    size_t total_bytes = 0;
    int64_t total_rows = 0;
    for (const auto& r : requests) {
      const std::vector<Tensor>& inputs = r->request.inputs;
      if (inputs.size() != first.size() || inputs[i].name != first[i].name ||
          inputs[i].dtype != first[i].dtype ||
          !std::equal(inputs[i].shape.begin() + 1, inputs[i].shape.end(),
                      first[i].shape.begin() + 1, first[i].shape.end())) {
        return absl::InternalError(
            StrCat("batched requests disagree on input '", first[i].name, "'"));
      }
      total_bytes += inputs[i].data.size();
      total_rows += inputs[i].shape[0];
    }
    uint8_t* out;
    Tensor packed{first[i].name, first[i].dtype, first[i].shape,
                  Buffer::Allocate(total_bytes, &out)};
    packed.shape[0] = total_rows;
    for (const auto& r : requests) {
      const Buffer& data = r->request.inputs[i].data;
      if (!data.empty()) std::memcpy(out, data.data(), data.size());
      out += data.size();
    }
    batch.push_back(std::move(packed));
  }
  return batch;
}

absl::StatusOr<std::vector<std::vector<Tensor>>> ScatterBatchOutputs(
    std::vector<Tensor> outputs, const std::vector<int64_t>& batch_sizes) {
  std::vector<std::vector<Tensor>> per_request(batch_sizes.size());
  if (batch_sizes.size() == 1) {
    per_request[0] = std::move(outputs);
    return per_request;
  }
  int64_t total_rows = 0;
  for (int64_t rows : batch_sizes) total_rows += rows;
  for (const Tensor& output : outputs) {
    if (output.shape.empty() || output.shape[0] != total_rows) {
      return absl::InternalError(
          StrCat("output '", output.name, "' has shape ", ShapeToString(output.shape),
                 "; a batch of ", total_rows, " rows needs it as the first dimension"));
    }
    std::vector<size_t> row_offsets;
    if (output.dtype == DataType::kBytes) {
      ASSIGN_OR_RETURN(row_offsets, BytesRowOffsets(output, total_rows));
    }
    const size_t row_bytes = total_rows > 0 ? output.data.size() / total_rows : 0;
    int64_t row = 0;
    for (size_t r = 0; r < batch_sizes.size(); ++r) {
      Tensor part{output.name, output.dtype, output.shape, {}};
      part.shape[0] = batch_sizes[r];
      if (output.dtype == DataType::kBytes) {
        const size_t begin = row_offsets[row];
        part.data = output.data.Slice(begin, row_offsets[row + batch_sizes[r]] - begin);
      } else {
        part.data = output.data.Slice(row * row_bytes, batch_sizes[r] * row_bytes);
      }
      row += batch_sizes[r];
      per_request[r].push_back(std::move(part));
    }
  }
  return per_request;
}

}  // namespace infera
