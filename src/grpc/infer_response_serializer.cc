#include "grpc/infer_response_serializer.h"

#include <vector>

#include "common/check.h"
#include "common/status.h"
#include "common/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "grpc/infer_message_codec.h"
#include "grpc/slice.h"
#include "grpc_service.pb.h"
#include "grpcpp/support/slice.h"

namespace infera {
namespace {

using google::protobuf::io::CodedOutputStream;

constexpr uint8_t kRawOutputContentsTag = (6 << 3) | 2;  // ModelInferResponse field 6, bytes
constexpr uint8_t kInferResponseTag = (2 << 3) | 2;      // ModelStreamInferResponse field 2

// A slice whose bytes are `data`'s, kept alive by a copy of the Buffer until gRPC lets
// go of the slice.
grpc::Slice Reference(const Buffer& data) {
  auto* keep = new Buffer(data);
  return grpc::Slice(const_cast<uint8_t*>(keep->data()), keep->size(),
                     [](void* buffer) { delete static_cast<Buffer*>(buffer); }, keep);
}

}  // namespace

absl::StatusOr<grpc::ByteBuffer> SerializeInferResponse(const InferResponse& response,
                                                        ResponseFraming framing, uint64_t max_bytes) {
  inference::ModelInferResponse header;
  RETURN_IF_ERROR(EncodeModelInferResponseHeader(response, &header));
  const size_t header_bytes = header.ByteSizeLong();
  const size_t outputs = response.outputs.size();

  // Sizes first: the whole ModelInferResponse (for the limit and the stream's length
  // prefix) and the bytes written next to the header.
  uint64_t message_bytes = header_bytes;
  uint64_t inline_bytes = header_bytes;
  for (size_t i = 0; i < outputs; ++i) {
    const uint64_t length = OutputInSharedMemory(response, i) ? 0 : response.outputs[i].data.size();
    const uint64_t prefix = 1 + CodedOutputStream::VarintSize64(length);
    message_bytes += prefix + length;
    inline_bytes += prefix + (length >= kReferenceBytes ? 0 : length);
  }
  if (message_bytes > max_bytes) {
    return absl::ResourceExhaustedError(StrCat("response of ", message_bytes, " bytes exceeds the ", max_bytes,
                                               "-byte gRPC message limit (--grpc-max-message-bytes)"));
  }
  if (framing == ResponseFraming::kStream) inline_bytes += 1 + CodedOutputStream::VarintSize64(message_bytes);

  // One allocation for every copied byte; referenced outputs are spliced in between
  // views of it.
  grpc_slice inline_slice = grpc_slice_malloc(static_cast<size_t>(inline_bytes));
  uint8_t* const start = GRPC_SLICE_START_PTR(inline_slice);
  uint8_t* out = start;
  if (framing == ResponseFraming::kStream) {
    *out++ = kInferResponseTag;
    out = CodedOutputStream::WriteVarint64ToArray(message_bytes, out);
  }
  out = header.SerializeWithCachedSizesToArray(out);
  std::vector<grpc::Slice> slices;
  size_t piece_start = 0;  // where the inline bytes not yet in `slices` begin
  for (size_t i = 0; i < outputs; ++i) {
    const bool in_shared_memory = OutputInSharedMemory(response, i);
    const Buffer& data = response.outputs[i].data;
    const size_t length = in_shared_memory ? 0 : data.size();
    *out++ = kRawOutputContentsTag;
    out = CodedOutputStream::WriteVarint64ToArray(length, out);
    if (length < kReferenceBytes) {
      if (length > 0) out = std::copy(data.data(), data.data() + length, out);
      continue;
    }
    const size_t here = static_cast<size_t>(out - start);
    slices.emplace_back(grpc_slice_sub(inline_slice, piece_start, here), grpc::Slice::STEAL_REF);
    slices.push_back(Reference(data));
    piece_start = here;
  }
  const size_t end = static_cast<size_t>(out - start);
  INFERA_CHECK(end == inline_bytes);
  if (slices.empty()) {
    slices.emplace_back(inline_slice, grpc::Slice::STEAL_REF);
  } else {
    if (end > piece_start) {
      slices.emplace_back(grpc_slice_sub(inline_slice, piece_start, end), grpc::Slice::STEAL_REF);
    }
    grpc_slice_unref(inline_slice);
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

}  // namespace infera
