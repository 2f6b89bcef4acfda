// GgufToSafetensors (conversion.h).
#include <map>
#include <memory>
#include <set>

#include "common/status.h"
#include "common/str_cat.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_tokenizer.h"
#include "llm/convert/atomic_file.h"
#include "llm/convert/config_differences.h"
#include "llm/convert/conversion.h"
#include "llm/convert/hf_config_json.h"
#include "llm/convert/output_types.h"
#include "llm/convert/safetensors_writer.h"
#include "llm/convert/tensor_mapping.h"
#include "llm/gguf_llama_config.h"
#include "llm/llama_config.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace infera::llm::convert {
namespace {

struct Planned {
  TensorMapping map;
  const gguf::GgufTensor* source;
  quant::BlockType source_type;
};

absl::Status Produce(const Planned& p, quant::BlockType out_type, TensorSink& sink) {
  const int64_t rows = p.map.matrix ? p.map.shape[0] : 1;
  const int64_t k = p.map.matrix ? p.map.shape[1] : p.map.shape[0];
  const int64_t in_row_bytes = quant::RowBytes(p.source_type, k);
  std::vector<float> row(static_cast<size_t>(k));
  std::vector<uint8_t> out(static_cast<size_t>(quant::RowBytes(out_type, k)));
  if (!p.map.matrix) {
    std::vector<float> v(static_cast<size_t>(k));
    quant::DequantizeRow(p.source_type, p.source->data, k, v.data());
    for (int64_t i = 0; i < k; ++i) {
      const int64_t from = p.map.permute_heads ? GgufRowOfHfRow(i, k, p.map.permute_heads) : i;
      row[i] = p.map.plus_one ? v[from] - 1.0f : v[from];
    }
    quant::QuantizeRow(out_type, row.data(), k, out.data());
    return sink.Write(out.data(), out.size());
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t s = p.map.permute_heads ? GgufRowOfHfRow(r, rows, p.map.permute_heads) : r;
    quant::DequantizeRow(p.source_type, p.source->data + s * in_row_bytes, k, row.data());
    quant::QuantizeRow(out_type, row.data(), k, out.data());
    RETURN_IF_ERROR(sink.Write(out.data(), out.size()));
  }
  return absl::OkStatus();
}

absl::Status WriteText(const std::filesystem::path& path, const std::string& text, bool overwrite) {
  ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> f, AtomicFile::Create(path, overwrite));
  RETURN_IF_ERROR(f->Write(text.data(), text.size()));
  return f->Commit();
}

}  // namespace

absl::StatusOr<ConversionSummary> GgufToSafetensors(const ConversionOptions& o) {
  ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(o.input));
  ASSIGN_OR_RETURN(LlamaConfig c, LlamaConfigFromGguf(*file));
  ASSIGN_OR_RETURN(gguf::TokenizerDocuments tokenizer, gguf::ConvertGgufTokenizer(file->metadata(), file->where()));

  // Per-frequency rope divisors: config.json can say longrope's factor lists exactly, but
  // no rope_scaling form reproduces arbitrary divisors (llama3's four parameters do not
  // follow from them).
  if (file->FindTensor(kRopeFreqsTensor) != nullptr) {
    return absl::InvalidArgumentError(StrCat(file->where(), ": tensor '", kRopeFreqsTensor,
                                             "' (per-frequency rope divisors) has no config.json form; it cannot be "
                                             "converted to safetensors"));
  }
  std::vector<Planned> plan;
  std::set<std::string> mapped;
  if (c.rope_scaling.type == "longrope") {  // config.json's short_factor / long_factor
    mapped.insert(std::string(kRopeFactorsShortTensor));
    mapped.insert(std::string(kRopeFactorsLongTensor));
  }
  std::map<std::string, int> dequantised;  // quantised type -> tensors
  std::set<quant::BlockType> matrix_types;
  for (const TensorMapping& m : TensorMappings(c)) {
    mapped.insert(m.gguf_name);
    const gguf::GgufTensor* t = file->FindTensor(m.gguf_name);
    if (t == nullptr) {
      if (m.optional) continue;
      return absl::InvalidArgumentError(StrCat(file->where(), ": tensor '", m.gguf_name, "' is missing"));
    }
    const std::vector<int64_t> want(m.shape.rbegin(), m.shape.rend());
    if (t->dims != want) {
      return absl::InvalidArgumentError(StrCat(file->where(), ": tensor '", m.gguf_name, "' has dims [",
                                               StrJoin(t->dims, ","), "]; the metadata implies [",
                                               StrJoin(want, ","), "]"));
    }
    const std::optional<quant::BlockType> type = quant::BlockTypeFromId(static_cast<uint32_t>(t->type));
    if (!type) {
      return absl::InvalidArgumentError(StrCat(file->where(), ": tensor '", m.gguf_name, "' has type ",
                                               gguf::GgmlTypeName(t->type),
                                               ", which cannot be decoded here (F32, F16, BF16, Q8_0, Q4_0, Q4_1, "
                                               "Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)"));
    }
    if (quant::IsQuantized(*type)) ++dequantised[quant::Name(*type)];
    if (m.matrix) matrix_types.insert(*type);
    plan.push_back({m, t, *type});
  }
  for (const gguf::GgufTensor& t : file->tensors()) {
    if (!mapped.count(t.name)) {
      return absl::InvalidArgumentError(
          StrCat(file->where(), ": tensor '", t.name, "' has no Hugging Face counterpart for ", c.model_type));
    }
  }
  WeightType out_type = WeightType::kF32;
  if (o.type) {
    ASSIGN_OR_RETURN(out_type, ParseSafetensorsType(*o.type));
  } else if (matrix_types.size() == 1 && *matrix_types.begin() == quant::BlockType::kF16) {
    out_type = WeightType::kF16;
  } else if (matrix_types.size() == 1 && *matrix_types.begin() == quant::BlockType::kBF16) {
    out_type = WeightType::kBF16;
  }

  // config.json must say what the GGUF says (read back with the safetensors path's parser).
  const std::string config_json = HfConfigJson(c, out_type);
  ASSIGN_OR_RETURN(LlamaConfig parsed, LlamaConfig::Parse(config_json));
  if (const std::vector<std::string> diff = ConfigDifferences(c, parsed); !diff.empty()) {
    return absl::InvalidArgumentError(
        StrCat(file->where(), ": config.json cannot express this GGUF (", StrJoin(diff, "; "), ")"));
  }

  const std::filesystem::path& dir = o.output;
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(StrCat("output ", dir.string(), " exists and is not a directory"));
  }
  if (!std::filesystem::exists(dir, ec)) {
    std::filesystem::path full = std::filesystem::absolute(dir).lexically_normal();
    if (!full.has_filename()) full = full.parent_path();  // "out/" names the folder "out"
    const std::filesystem::path parent = full.parent_path();
    if (!std::filesystem::is_directory(parent, ec)) {
      return absl::InvalidArgumentError(StrCat("output directory's parent ", parent.string(), " does not exist"));
    }
    if (!std::filesystem::create_directory(dir, ec) || ec) {
      return absl::InvalidArgumentError(StrCat("cannot create output directory ", dir.string(), ": ", ec.message()));
    }
  }
  const char* kFiles[] = {"model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json",
                          "generation_config.json"};
  if (!o.overwrite) {
    for (const char* f : kFiles) {
      if (std::filesystem::exists(dir / f, ec)) {
        return absl::InvalidArgumentError(
            StrCat("output ", (dir / f).string(), " exists (pass --force to replace it)"));
      }
    }
  }
  // Weights first: the folder becomes loadable (config.json) only once they are complete.
  SafetensorsWriter st;
  for (const Planned& p : plan) st.AddTensor(p.map.hf_name, out_type, p.map.shape);
  RETURN_IF_ERROR(st.Write(dir / "model.safetensors", o.overwrite, [&](size_t i, TensorSink& sink) {
    return Produce(plan[i], BlockTypeOf(out_type), sink);
  }));
  RETURN_IF_ERROR(WriteText(dir / "tokenizer.json", tokenizer.tokenizer_json, o.overwrite));
  RETURN_IF_ERROR(WriteText(dir / "tokenizer_config.json", tokenizer.tokenizer_config_json, o.overwrite));
  RETURN_IF_ERROR(WriteText(dir / "generation_config.json", tokenizer.generation_config_json, o.overwrite));
  RETURN_IF_ERROR(WriteText(dir / "config.json", config_json, o.overwrite));

  ConversionSummary s;
  s.architecture = c.model_type;
  s.tensors = plan.size();
  s.output_bytes = std::filesystem::file_size(dir / "model.safetensors", ec);
  s.notes.push_back(StrCat("weights as ", WeightTypeName(out_type)));
  if (!dequantised.empty()) {
    std::vector<std::string> parts;
    for (const auto& [name, n] : dequantised) parts.push_back(StrCat(n, " ", name));
    s.notes.push_back(StrCat("dequantised ", StrJoin(parts, ", "), " tensors to ", WeightTypeName(out_type),
                             ": the checkpoint holds the quantised values, not the original weights"));
  }
  return s;
}

}  // namespace infera::llm::convert
