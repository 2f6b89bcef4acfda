#include "tools/bench/grpc_messages.h"

#include <fstream>
#include <iterator>
#include <optional>
#include <utility>

#include "common/str_cat.h"

namespace infera::bench {

namespace {

absl::StatusOr<std::string> ReadPemFile(std::string_view flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (in.is_open()) text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (text.empty()) {
    return absl::InvalidArgumentError(StrCat("--", flag, ": cannot read ", path, " (or it is empty)"));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> MakeBenchCredentials(const GrpcTlsFiles& tls) {
  if (!tls.use_ssl) return std::shared_ptr<grpc::ChannelCredentials>();
  grpc::SslCredentialsOptions ssl;
  const std::pair<std::string_view, const std::string*> files[] = {
      {"ssl-grpc-root-certifications-file", &tls.root_certificates_file},
      {"ssl-grpc-private-key-file", &tls.private_key_file},
      {"ssl-grpc-certificate-chain-file", &tls.certificate_chain_file}};
  std::string* fields[] = {&ssl.pem_root_certs, &ssl.pem_private_key, &ssl.pem_cert_chain};
  for (size_t i = 0; i < 3; ++i) {
    if (files[i].second->empty()) continue;
    absl::StatusOr<std::string> text = ReadPemFile(files[i].first, *files[i].second);
    if (!text.ok()) return text.status();
    *fields[i] = *std::move(text);
  }
  return grpc::SslCredentials(ssl);
}

std::shared_ptr<grpc::Channel> MakeBenchChannel(const GrpcTarget& target) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  return grpc::CreateCustomChannel(
      target.address, target.credentials ? target.credentials : grpc::InsecureChannelCredentials(), args);
}

std::string GrpcCodeName(grpc::StatusCode code) {
  static const char* kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                 "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED",
                                 "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int c = static_cast<int>(code);
  return c >= 0 && c < 17 ? kNames[c] : StrCat("code ", c);
}

inference::ModelInferRequest BuildModelInferRequest(const std::string& model, const std::string& version,
                                                    const PayloadData& payload) {
  inference::ModelInferRequest request;
  request.set_model_name(model);
  request.set_model_version(version);
  auto set_shm = [](const ShmTensorRef& ref, auto* parameters) {
    (*parameters)["shared_memory_region"].set_string_param(ref.region);
    (*parameters)["shared_memory_byte_size"].set_int64_param(static_cast<int64_t>(ref.byte_size));
    if (ref.offset != 0) (*parameters)["shared_memory_offset"].set_int64_param(static_cast<int64_t>(ref.offset));
  };
  for (size_t i = 0; i < payload.inputs.size(); ++i) {
    const Tensor& t = payload.inputs[i];
    auto* input = request.add_inputs();
    input->set_name(t.name);
    input->set_datatype(std::string(DataTypeName(t.dtype)));
    for (int64_t d : t.shape) input->add_shape(d);
    if (payload.shm) {
      set_shm(payload.shm->inputs[i], input->mutable_parameters());  // no raw contents
    } else {
      request.add_raw_input_contents(std::string(t.data.AsStringView()));
    }
  }
  if (payload.shm) {
    for (const auto& [name, ref] : payload.shm->outputs) {
      auto* output = request.add_outputs();
      output->set_name(name);
      set_shm(ref, output->mutable_parameters());
    }
  }
  return request;
}

absl::StatusOr<std::vector<Tensor>> DecodeModelInferOutputs(const inference::ModelInferResponse& response) {
  if (response.raw_output_contents_size() != response.outputs_size()) {
    return absl::InvalidArgumentError("response without raw_output_contents for every output");
  }
  std::vector<Tensor> outputs;
  for (int i = 0; i < response.outputs_size(); ++i) {
    const auto& o = response.outputs(i);
    std::optional<DataType> dtype = ParseDataTypeName(o.datatype());
    if (!dtype) return absl::InvalidArgumentError(StrCat("output ", o.name(), ": unknown datatype"));
    Tensor t{o.name(), *dtype, Shape(o.shape().begin(), o.shape().end()),
             Buffer::Copy(response.raw_output_contents(i).data(), response.raw_output_contents(i).size())};
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace infera::bench
