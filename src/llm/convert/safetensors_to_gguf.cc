// SafetensorsToGguf (conversion.h).
#include <algorithm>
#include <cstring>
#include <set>

#include "common/status.h"
#include "common/str_cat.h"
#include "gguf/gguf_file.h"
#include "gguf/gguf_tokenizer.h"
#include "llm/convert/config_differences.h"
#include "llm/convert/conversion.h"
#include "llm/convert/gguf_architecture_keys.h"
#include "llm/convert/gguf_writer.h"
#include "llm/convert/hf_tokenizer_keys.h"
#include "llm/convert/output_types.h"
#include "llm/convert/rope_factor_tensors.h"
#include "llm/convert/tensor_mapping.h"
#include "llm/gguf_llama_config.h"
#include "llm/llama_config.h"
#include "llm/safetensors.h"
#include "quant/dequantize.h"
#include "quant/quantize.h"

namespace infera::llm::convert {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Source tensors a checkpoint may carry that have no GGUF counterpart and are not needed.
bool Ignorable(const std::string& name, const LlamaConfig& c) {
  return EndsWith(name, "rotary_emb.inv_freq") || (name == "lm_head.weight" && c.tie_word_embeddings);
}

struct Planned {
  TensorMapping map;
  TensorView source;
  quant::BlockType type;
};

// Row `r` of `v` (rows of `k` elements) widened to float.
void SourceRow(const TensorView& v, int64_t r, int64_t k, std::vector<uint8_t>& scratch, float* out) {
  const size_t bytes = static_cast<size_t>(k) * WeightTypeSize(v.dtype);
  scratch.resize(bytes);
  std::memcpy(scratch.data(), v.data + static_cast<size_t>(r) * bytes, bytes);  // views may be unaligned
  quant::DequantizeRow(BlockTypeOf(v.dtype), scratch.data(), k, out);
}

absl::Status Produce(const Planned& p, TensorSink& sink) {
  const int64_t rows = p.map.matrix ? p.map.shape[0] : 1;
  const int64_t k = p.map.matrix ? p.map.shape[1] : p.map.shape[0];
  std::vector<uint8_t> scratch;
  std::vector<float> row(static_cast<size_t>(k));
  std::vector<uint8_t> out(static_cast<size_t>(quant::RowBytes(p.type, k)));
  if (!p.map.matrix) {  // a vector: permute (llama's q/k biases) and add Gemma's 1 on the elements
    std::vector<float> v(static_cast<size_t>(k));
    SourceRow(p.source, 0, k, scratch, v.data());
    for (int64_t i = 0; i < k; ++i) {
      const int64_t from = p.map.permute_heads ? HfRowOfGgufRow(i, k, p.map.permute_heads) : i;
      row[i] = p.map.plus_one ? v[from] + 1.0f : v[from];
    }
    quant::QuantizeRow(p.type, row.data(), k, out.data());
    return sink.Write(out.data(), out.size());
  }
  for (int64_t s = 0; s < rows; ++s) {
    const int64_t r = p.map.permute_heads ? HfRowOfGgufRow(s, rows, p.map.permute_heads) : s;
    SourceRow(p.source, r, k, scratch, row.data());
    quant::QuantizeRow(p.type, row.data(), k, out.data());
    RETURN_IF_ERROR(sink.Write(out.data(), out.size()));
  }
  return absl::OkStatus();
}

// The written file, read as the server reads it: its config must be the source's, its
// tokenizer must load.
absl::Status Verify(const std::filesystem::path& temp, const LlamaConfig& want) {
  ASSIGN_OR_RETURN(std::unique_ptr<gguf::GgufFile> file, gguf::GgufFile::Open(temp));
  ASSIGN_OR_RETURN(LlamaConfig got, LlamaConfigFromGguf(*file));
  const std::vector<std::string> diff = ConfigDifferences(want, got);
  if (!diff.empty()) {
    return absl::InvalidArgumentError(StrCat("GGUF metadata cannot express this config.json (", StrJoin(diff, "; "),
                                             ")"));
  }
  ASSIGN_OR_RETURN(auto tokenizer, gguf::LoadGgufTokenizer(file->metadata(), "the converted tokenizer"));
  (void)tokenizer;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConversionSummary> SafetensorsToGguf(const ConversionOptions& o) {
  const std::filesystem::path& dir = o.input;
  ASSIGN_OR_RETURN(LlamaConfig c, LlamaConfig::Load(dir / "config.json"));
  ASSIGN_OR_RETURN(std::string arch, GgufArchitecture(c));
  ASSIGN_OR_RETURN(std::unique_ptr<SafetensorsModel> model, SafetensorsModel::Open(dir));

  // Plan every tensor before writing anything.
  std::vector<Planned> plan;
  std::set<std::string> mapped;
  std::optional<GgufTypeChoice> choice;
  if (o.type) {
    ASSIGN_OR_RETURN(GgufTypeChoice t, ParseGgufType(*o.type));
    choice = t;
  }
  for (const TensorMapping& m : TensorMappings(c)) {
    mapped.insert(m.hf_name);
    if (!model->Has(m.hf_name)) {
      if (m.optional) continue;
      return absl::InvalidArgumentError(StrCat("tensor '", m.hf_name, "' is missing from ", dir.string(),
                                               " (a ", c.model_type, " checkpoint needs it)"));
    }
    ASSIGN_OR_RETURN(TensorView v, model->Get(m.hf_name));
    if (v.shape != m.shape) {
      return absl::InvalidArgumentError(StrCat("tensor '", m.hf_name, "' has shape [", StrJoin(v.shape, ","),
                                               "]; config.json implies [", StrJoin(m.shape, ","), "]"));
    }
    if (!choice) {  // default: the source's float type, from the embedding
      ASSIGN_OR_RETURN(TensorView embed, model->Get("model.embed_tokens.weight"));
      choice = GgufTypeChoice{BlockTypeOf(embed.dtype), false, std::string(WeightTypeName(embed.dtype))};
    }
    const quant::BlockType type = m.matrix ? MatrixType(*choice, m.gguf_name) : quant::BlockType::kF32;
    if (std::string problem = quant::CheckRowLength(type, m.shape.back()); !problem.empty()) {
      return absl::InvalidArgumentError(StrCat("tensor '", m.hf_name, "' cannot be stored as ", quant::Name(type), ": ",
                                               problem));
    }
    plan.push_back({m, v, type});
  }
  for (const std::string& name : model->Names()) {
    if (!mapped.count(name) && !Ignorable(name, c)) {
      return absl::InvalidArgumentError(
          StrCat("tensor '", name, "' in ", dir.string(), " has no GGUF counterpart for ", c.model_type));
    }
  }

  GgufWriter w;
  std::string name = o.name.empty() ? std::filesystem::absolute(dir).lexically_normal().filename().string() : o.name;
  if (name.empty()) name = std::filesystem::absolute(dir).lexically_normal().parent_path().filename().string();
  RETURN_IF_ERROR(AddArchitectureKeys(c, name, w));
  RETURN_IF_ERROR(AddTokenizerKeys(dir, w));
  for (const Planned& p : plan) {
    const int64_t rows = p.map.matrix ? p.map.shape[0] : 1;
    std::vector<int64_t> dims(p.map.shape.rbegin(), p.map.shape.rend());
    w.AddTensor(p.map.gguf_name, p.type, dims,
                static_cast<uint64_t>(rows * quant::RowBytes(p.type, p.map.shape.back())));
  }
  // llama3 / longrope's per-frequency factors as llama.cpp writes them (F32 vectors).
  const std::vector<RopeFactorTensor> rope = RopeFactorTensors(c);
  for (const RopeFactorTensor& t : rope) {
    w.AddTensor(t.name, quant::BlockType::kF32, {static_cast<int64_t>(t.values.size())}, t.values.size() * 4);
  }
  RETURN_IF_ERROR(w.Write(
      o.output, o.overwrite,
      [&](size_t i, TensorSink& sink) {
        if (i < plan.size()) return Produce(plan[i], sink);
        const std::vector<float>& v = rope[i - plan.size()].values;
        return sink.Write(v.data(), v.size() * 4);
      },
      [&](const std::filesystem::path& temp) { return Verify(temp, c); }));

  ConversionSummary s;
  s.architecture = arch;
  s.tensors = plan.size() + rope.size();
  std::error_code ec;
  s.output_bytes = std::filesystem::file_size(o.output, ec);
  s.notes.push_back(StrCat("matrices as ", choice->q4_k_m ? std::string("Q4_K_M (Q4_K; Q6_K attn_v, ffn_down, output)")
                                                          : std::string(quant::Name(choice->matrices)),
                           ", norms and biases as F32"));
  if (c.rope_scaling.type == "llama3") {
    s.notes.push_back("rope_scaling llama3 as rope_freqs.weight (per-frequency divisors, as llama.cpp writes it)");
  } else if (c.rope_scaling.type == "longrope") {
    s.notes.push_back("longrope as rope_factors_short/long.weight (served up to original_max_position_embeddings)");
  }
  return s;
}

}  // namespace infera::llm::convert
