#include "llm/convert/convert_command.h"

#include <ostream>
#include <system_error>

#include "common/status.h"
#include "common/str_cat.h"

namespace infera::llm::convert {

std::string ConvertHelpText() {
  return "infera llm convert: a Hugging Face checkpoint to a GGUF file, or a GGUF file back to a\n"
         "checkpoint, for llama / Mistral, qwen2, qwen3, phi3, gemma2 and gemma3 (docs/llm.md,\n"
         "\"infera llm convert\").\n"
         "\n"
         "Usage:\n"
         "  infera llm convert --input DIR --output FILE.gguf [--type T] [--name NAME] [--force]\n"
         "  infera llm convert --input FILE.gguf --output DIR [--type f32|f16|bf16] [--force]\n"
         "\n"
         "Flags:\n"
         "  --input PATH   a folder with config.json, *.safetensors and tokenizer.json, or a .gguf file\n"
         "  --output PATH  the .gguf file to write, or the folder to write the checkpoint into\n"
         "  --type T       to GGUF: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q4_k, q5_k, q6_k or\n"
         "                 q4_k_m (Q4_K, Q6_K for attn_v, ffn_down, output); norms and biases stay F32.\n"
         "                 Default: the checkpoint's own float type.\n"
         "                 To safetensors: f32, f16 or bf16 (quantised tensors are dequantised).\n"
         "                 Default: the GGUF's float type when all its matrices share one, else f32.\n"
         "  --name NAME    general.name of the GGUF (default: the input folder's name)\n"
         "  --force        replace existing output files\n"
         "  --help         show this text\n";
}

absl::StatusOr<ConvertFlags> ParseConvertFlags(const std::vector<std::string>& args) {
  ConvertFlags f;
  bool have_input = false, have_output = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i], value;
    bool has_value = false;
    if (const size_t eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    auto take = [&]() -> absl::StatusOr<std::string> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return absl::InvalidArgumentError(StrCat(flag, " needs a value"));
      return args[++i];
    };
    if (flag == "--help" || flag == "-h") {
      f.help = true;
    } else if (flag == "--force") {
      if (has_value) return absl::InvalidArgumentError("--force takes no value");
      f.options.overwrite = true;
    } else if (flag == "--input" || flag == "-i") {
      ASSIGN_OR_RETURN(std::string v, take());
      f.options.input = v;
      have_input = !v.empty();
    } else if (flag == "--output" || flag == "-o") {
      ASSIGN_OR_RETURN(std::string v, take());
      f.options.output = v;
      have_output = !v.empty();
    } else if (flag == "--type") {
      ASSIGN_OR_RETURN(std::string v, take());
      f.options.type = v;
    } else if (flag == "--name") {
      ASSIGN_OR_RETURN(f.options.name, take());
    } else {
      return absl::InvalidArgumentError(StrCat("unknown flag '", args[i], "'"));
    }
  }
  if (f.help) return f;
  if (!have_input) return absl::InvalidArgumentError("--input is required");
  if (!have_output) return absl::InvalidArgumentError("--output is required");
  return f;
}

int RunConvertCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ConvertFlags> flags = ParseConvertFlags(args);
  if (!flags.ok()) {
    err << "infera llm convert: " << flags.status().message() << " (see 'infera llm convert --help')\n";
    return 2;
  }
  if (flags->help) {
    out << ConvertHelpText();
    return 0;
  }
  const ConversionOptions& o = flags->options;
  std::error_code ec;
  absl::StatusOr<ConversionSummary> summary;
  if (std::filesystem::is_directory(o.input, ec)) {
    if (o.output.extension() != ".gguf") {
      err << "infera llm convert: --output " << o.output.string()
          << " must name a .gguf file (the input is a checkpoint folder)\n";
      return 2;
    }
    summary = SafetensorsToGguf(o);
  } else if (std::filesystem::is_regular_file(o.input, ec)) {
    summary = GgufToSafetensors(o);
  } else {
    err << "infera llm convert: --input " << o.input.string() << " is neither a folder nor a file\n";
    return 2;
  }
  if (!summary.ok()) {
    err << "infera llm convert: " << summary.status().message() << "\n";
    return 1;
  }
  out << "wrote " << o.output.string() << ": " << summary->architecture << ", " << summary->tensors << " tensors, "
      << summary->output_bytes << " bytes\n";
  for (const std::string& note : summary->notes) out << "  " << note << "\n";
  return 0;
}

}  // namespace infera::llm::convert
