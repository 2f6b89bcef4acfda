// llm_eval: accuracy of a model configuration against a reference configuration of the
// same weights (docs/llm.md, "Weight quantisation"): perplexity on a text and greedy
// agreement, printed as JSON. Runs the paged model runner directly (no server).
//
//   llm_eval --model DIR --text FILE [--param key=value ...] [--reference-param key=value ...]
//            [--reference-model DIR] [--max-tokens 1024] [--window 256] [--prompts 8] [--prompt-tokens 16]
//            [--agreement-tokens 32] [--threads 1]
//
// --param / --reference-param are config.pbtxt parameters (string values), parsed by
// LlmModelOptions::FromConfig and applied by LlamaModelRunner::Load(dir, options, ...),
// exactly as the `llm` backend does: any engine option works here unchanged. The
// reference defaults to no parameters (fp32 weights, or bf16 for a bf16 checkpoint) on
// the same model folder; --reference-model names another folder with the same
// architecture and tokenizer (e.g. the fp32 original of a bf16 copy).
//
// (a) Perplexity: the text is tokenised (with the tokenizer's special tokens), cut to
//     --max-tokens, split into windows of --window tokens (≤ max_position_embeddings),
//     each evaluated from position 0: exp(mean −log p(token i+1 | tokens ≤ i)). The
//     same pass gives `top1_agreement`: the fraction of positions where the model's
//     argmax equals the reference's (teacher-forced on the text).
// (b) Greedy agreement: --prompts prompts of --prompt-tokens tokens, taken from the text
//     at evenly spaced offsets; both configurations generate --agreement-tokens greedy
//     tokens from each. `prefix_fraction`: matched tokens until the first divergence,
//     summed over prompts / all tokens; `position_fraction`: positions with equal tokens
//     / all tokens; `teacher_forced_fraction`: positions where the model's argmax, fed
//     the reference's continuation, is the reference's token.
//
// Output: {"model": ..., "params": {...}, "reference_params": {...}, "weight_bytes": N,
//          "reference_weight_bytes": N, "perplexity": {"tokens": N, "model": x,
//          "reference": y, "top1_agreement": f}, "greedy": {...}}
// Exit 2 on bad flags, 1 on a load or run error (the message names the problem).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "llm/llama_model_runner.h"
#include "llm/llm_model_options.h"
#include "text/tokenizer.h"
#include "tools/llm/tool_cli.h"

namespace {

using infera::StrCat;
using namespace infera::llm;

struct Flags {
  std::string model, text, reference_model;
  std::map<std::string, std::string> params, reference_params;
  int64_t max_tokens = 1024, window = 256, prompts = 8, prompt_tokens = 16, agreement_tokens = 32;
  int threads = 1;
};

constexpr char kUsage[] =
    "Usage: llm_eval --model DIR --text FILE [flags]\n"
    "\n"
    "Accuracy of an LLM configuration against a reference configuration of the same weights\n"
    "(docs/llm.md, \"Weight quantisation\"): perplexity on FILE and greedy agreement, as JSON.\n"
    "Runs the paged model runner directly, no server.\n"
    "\n"
    "Flags:\n"
    "  --model DIR               the model folder (config.json, weights, tokenizer) (required)\n"
    "  --text FILE               the evaluation text (required)\n"
    "  --param KEY=VALUE         a config.pbtxt parameter of the model under test, e.g.\n"
    "                            quantization=int8 (repeatable)\n"
    "  --reference-param K=V     a parameter of the reference (repeatable). Default: none\n"
    "  --reference-model DIR     the reference's folder (same architecture and tokenizer).\n"
    "                            Default: --model\n"
    "  --max-tokens N            tokens of FILE evaluated. Default 1024\n"
    "  --window N                perplexity window (<= max_position_embeddings). Default 256\n"
    "  --prompts N               greedy-agreement prompts taken from FILE. Default 8\n"
    "  --prompt-tokens N         tokens per prompt. Default 16\n"
    "  --agreement-tokens N      greedy tokens generated per prompt. Default 32\n"
    "  --threads N               intra-op threads. Default 1\n"
    "  -h, --help                show this help\n"
    "\n"
    "Exit 2 on a bad flag, 1 on a load or run error.\n";

[[noreturn]] void Fail(int code, const std::string& message) {
  if (code == 2) infera::llm_tools::FlagError("llm_eval", message);
  std::cerr << "llm_eval: " << message << "\n";
  std::exit(code);
}

int64_t ParsePositive(const std::string& flag, const std::string& v, int64_t max) {
  return infera::llm_tools::IntegerFlag("llm_eval", flag, v, 1, max);
}

Flags ParseFlags(int argc, char** argv) {
  infera::llm_tools::HandleHelp(argc, argv, kUsage);
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag.rfind("--", 0) != 0) Fail(2, StrCat("unexpected argument '", flag, "' (flags start with --)"));
    static const char* const kKnown[] = {"--model",    "--text",    "--reference-model", "--param",
                                         "--reference-param", "--max-tokens", "--window", "--prompts",
                                         "--prompt-tokens", "--agreement-tokens", "--threads"};
    if (std::find(std::begin(kKnown), std::end(kKnown), flag) == std::end(kKnown)) {
      Fail(2, StrCat("unknown flag ", flag));
    }
    if (i + 1 >= argc) Fail(2, StrCat(flag, " needs a value"));
    const std::string v = argv[++i];
    if (flag == "--model") f.model = v;
    else if (flag == "--text") f.text = v;
    else if (flag == "--reference-model") f.reference_model = v;
    else if (flag == "--param" || flag == "--reference-param") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) Fail(2, StrCat(flag, ": '", v, "' is not key=value"));
      (flag == "--param" ? f.params : f.reference_params)[v.substr(0, eq)] = v.substr(eq + 1);
    } else if (flag == "--max-tokens") f.max_tokens = ParsePositive(flag, v, int64_t{1} << 24);
    else if (flag == "--window") f.window = ParsePositive(flag, v, int64_t{1} << 16);
    else if (flag == "--prompts") f.prompts = ParsePositive(flag, v, 1024);
    else if (flag == "--prompt-tokens") f.prompt_tokens = ParsePositive(flag, v, int64_t{1} << 16);
    else if (flag == "--agreement-tokens") f.agreement_tokens = ParsePositive(flag, v, int64_t{1} << 16);
    else if (flag == "--threads") f.threads = static_cast<int>(ParsePositive(flag, v, 1024));
    else Fail(2, StrCat("unknown flag ", flag));
  }
  if (f.model.empty() || f.text.empty()) Fail(2, "--model and --text are required");
  if (f.reference_model.empty()) f.reference_model = f.model;
  return f;
}

// A runner with its KV cache, built from config parameters as the backend builds it.
struct Evaluated {
  std::unique_ptr<LlamaModelRunner> runner;
  int64_t block_size = 16;
  int64_t num_blocks = 0;
};

Evaluated LoadConfigured(const Flags& f, const std::string& dir, const std::map<std::string, std::string>& params,
                         int64_t max_seq_tokens, int64_t sequences) {
  inference::ModelConfig config;
  for (const auto& [k, v] : params) (*config.mutable_parameters())[k].set_string_value(v);
  auto options = LlmModelOptions::FromConfig(config);
  if (!options.ok()) Fail(1, options.status().ToString());
  auto runner = LlamaModelRunner::Load(dir, *options, f.threads);
  if (!runner.ok()) Fail(1, runner.status().ToString());
  Evaluated e;
  e.runner = std::move(*runner);
  e.block_size = options->block_size;
  const int64_t per_seq = (max_seq_tokens + e.block_size - 1) / e.block_size;
  e.num_blocks = per_seq * sequences;
  if (auto st = e.runner->AllocateKvCache(e.num_blocks, e.block_size); !st.ok()) Fail(1, st.ToString());
  return e;
}

// Runs one step where every listed token is its own single-token sequence that shares
// its real sequence's block table (the runner writes a layer's K/V for every token
// before any attention of that layer reads them), so one step yields the logits after
// every position: a prefill with all logits. Returns [tokens][vocab].
std::vector<float> StepAllLogits(LlamaModelRunner& runner, const std::vector<int32_t>& tokens, int64_t start,
                                 const std::vector<int32_t>& blocks) {
  SchedulerOutput step;
  for (size_t i = 0; i < tokens.size(); ++i) {
    ScheduledSequence seq;
    seq.request_id = i;
    seq.token_ids = {tokens[i]};
    seq.start_position = start + static_cast<int64_t>(i);
    seq.block_ids = blocks;
    seq.sample = true;
    step.sequences.push_back(std::move(seq));
  }
  auto out = runner.Execute(step);
  if (!out.ok()) Fail(1, out.status().ToString());
  return std::move(out->logits);
}

// The logits after every position of `tokens` (fed from position 0, in chunks).
std::vector<float> AllLogits(Evaluated& e, const std::vector<int32_t>& tokens, int64_t block_offset) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  std::vector<int32_t> blocks;
  for (int64_t b = 0; b * e.block_size < n; ++b) blocks.push_back(static_cast<int32_t>(block_offset + b));
  std::vector<float> all;
  constexpr int64_t kChunk = 64;
  for (int64_t s = 0; s < n; s += kChunk) {
    std::vector<int32_t> chunk(tokens.begin() + s, tokens.begin() + std::min(n, s + kChunk));
    std::vector<float> logits = StepAllLogits(*e.runner, chunk, s, blocks);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  return all;
}

int32_t ArgMax(const float* row, int64_t n) { return static_cast<int32_t>(std::max_element(row, row + n) - row); }

double LogSoftmaxAt(const float* row, int64_t n, int32_t target) {
  const double max = *std::max_element(row, row + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(row[i]) - max);
  return static_cast<double>(row[target]) - max - std::log(sum);
}

// Greedy continuations of every prompt, decoded together (batched).
std::vector<std::vector<int32_t>> Generate(Evaluated& e, const std::vector<std::vector<int32_t>>& prompts,
                                           int64_t steps) {
  const int64_t vocab = e.runner->vocab_size();
  const int64_t per_seq = e.num_blocks / static_cast<int64_t>(prompts.size());
  std::vector<std::vector<int32_t>> generated(prompts.size());
  std::vector<std::vector<int32_t>> blocks(prompts.size());
  for (size_t p = 0; p < prompts.size(); ++p) {
    for (int64_t b = 0; b < per_seq; ++b) blocks[p].push_back(static_cast<int32_t>(p * per_seq + b));
  }
  for (int64_t g = 0; g < steps; ++g) {
    SchedulerOutput step;
    for (size_t p = 0; p < prompts.size(); ++p) {
      ScheduledSequence seq;
      seq.request_id = p;
      if (g == 0) {
        seq.token_ids = prompts[p];
        seq.start_position = 0;
      } else {
        seq.token_ids = {generated[p].back()};
        seq.start_position = static_cast<int64_t>(prompts[p].size()) + g - 1;
      }
      seq.block_ids = blocks[p];
      seq.sample = true;
      step.sequences.push_back(std::move(seq));
    }
    auto out = e.runner->Execute(step);
    if (!out.ok()) Fail(1, out.status().ToString());
    for (size_t p = 0; p < prompts.size(); ++p) generated[p].push_back(ArgMax(out->Row(p), vocab));
  }
  return generated;
}

// A JSON string literal of `text` (quotes, backslashes and control bytes escaped).
std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string JsonParams(const std::map<std::string, std::string>& params) {
  std::string s = "{";
  for (const auto& [k, v] : params) {
    if (s.size() > 1) s += ", ";
    s += StrCat(JsonString(k), ": ", JsonString(v));
  }
  return s + "}";
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = ParseFlags(argc, argv);
  std::ifstream in(f.text, std::ios::binary);
  if (!in) Fail(1, StrCat("cannot read --text ", f.text));
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto tokenizer = infera::text::Tokenizer::Load(f.model);
  if (!tokenizer.ok()) Fail(1, tokenizer.status().ToString());
  std::vector<int32_t> ids = (*tokenizer)->Encode(buffer.str(), /*add_special_tokens=*/true);
  if (static_cast<int64_t>(ids.size()) > f.max_tokens) ids.resize(static_cast<size_t>(f.max_tokens));
  if (ids.size() < 2) Fail(1, StrCat("--text ", f.text, " has fewer than 2 tokens"));

  // Sequences: one perplexity window at a time, or the prompts with their continuations.
  const int64_t gen_len = f.prompt_tokens + f.agreement_tokens;
  const int64_t per_seq_tokens = std::max(f.window, gen_len);
  Evaluated model = LoadConfigured(f, f.model, f.params, per_seq_tokens, f.prompts);
  Evaluated reference = LoadConfigured(f, f.reference_model, f.reference_params, per_seq_tokens, f.prompts);
  if (reference.runner->vocab_size() != model.runner->vocab_size()) {
    Fail(2, "--reference-model has a different vocabulary size");
  }
  const int64_t max_len = model.runner->config().max_position_embeddings;
  const int64_t window = std::min(f.window, max_len);
  if (gen_len > max_len) Fail(2, StrCat("--prompt-tokens + --agreement-tokens exceed max_position_embeddings ", max_len));
  const int64_t vocab = model.runner->vocab_size();

  // (a) perplexity and teacher-forced top-1 agreement on the text.
  double nll_model = 0, nll_reference = 0;
  int64_t predicted = 0, top1_equal = 0;
  for (size_t w0 = 0; w0 + 1 < ids.size(); w0 += static_cast<size_t>(window)) {
    const size_t w1 = std::min(ids.size(), w0 + static_cast<size_t>(window));
    std::vector<int32_t> win(ids.begin() + w0, ids.begin() + w1);
    if (win.size() < 2) break;
    std::vector<float> a = AllLogits(model, win, 0), b = AllLogits(reference, win, 0);
    for (size_t i = 0; i + 1 < win.size(); ++i) {
      const float* ra = a.data() + i * vocab;
      const float* rb = b.data() + i * vocab;
      nll_model -= LogSoftmaxAt(ra, vocab, win[i + 1]);
      nll_reference -= LogSoftmaxAt(rb, vocab, win[i + 1]);
      top1_equal += ArgMax(ra, vocab) == ArgMax(rb, vocab);
      ++predicted;
    }
  }

  // (b) greedy agreement.
  std::vector<std::vector<int32_t>> prompts;
  const int64_t span = static_cast<int64_t>(ids.size()) - f.prompt_tokens;
  if (span < 0) Fail(2, StrCat("the text has ", ids.size(), " tokens, fewer than --prompt-tokens"));
  for (int64_t p = 0; p < f.prompts; ++p) {
    const int64_t start = f.prompts == 1 ? 0 : span * p / (f.prompts - 1);
    prompts.emplace_back(ids.begin() + start, ids.begin() + start + f.prompt_tokens);
  }
  const auto got = Generate(model, prompts, f.agreement_tokens);
  const auto want = Generate(reference, prompts, f.agreement_tokens);
  int64_t prefix_total = 0, position_equal = 0, forced_equal = 0;
  std::vector<int64_t> prefixes;
  for (size_t p = 0; p < prompts.size(); ++p) {
    int64_t prefix = 0;
    while (prefix < f.agreement_tokens && got[p][prefix] == want[p][prefix]) ++prefix;
    prefixes.push_back(prefix);
    prefix_total += prefix;
    for (int64_t i = 0; i < f.agreement_tokens; ++i) position_equal += got[p][i] == want[p][i];
    // Teacher-forced: the model reads prompt + the reference's continuation.
    std::vector<int32_t> forced = prompts[p];
    forced.insert(forced.end(), want[p].begin(), want[p].end() - 1);
    const std::vector<float> logits = AllLogits(model, forced, 0);
    for (int64_t i = 0; i < f.agreement_tokens; ++i) {
      const int64_t row = f.prompt_tokens - 1 + i;
      forced_equal += ArgMax(logits.data() + row * vocab, vocab) == want[p][i];
    }
  }
  const double total = static_cast<double>(f.prompts * f.agreement_tokens);
  std::string json = StrCat(
      "{\"model\": ", JsonString(f.model), ", \"reference_model\": ", JsonString(f.reference_model), ", \"params\": ",
      JsonParams(f.params), ", \"reference_params\": ",
      JsonParams(f.reference_params), ", \"weight_bytes\": ", model.runner->weight_bytes(),
      ", \"reference_weight_bytes\": ", reference.runner->weight_bytes(), ", \"perplexity\": {\"tokens\": ", predicted,
      ", \"window\": ", window, ", \"model\": ", std::exp(nll_model / static_cast<double>(predicted)),
      ", \"reference\": ", std::exp(nll_reference / static_cast<double>(predicted)),
      ", \"top1_agreement\": ", static_cast<double>(top1_equal) / static_cast<double>(predicted),
      "}, \"greedy\": {\"prompts\": ", f.prompts, ", \"prompt_tokens\": ", f.prompt_tokens,
      ", \"tokens\": ", f.agreement_tokens, ", \"prefix_fraction\": ", static_cast<double>(prefix_total) / total,
      ", \"position_fraction\": ", static_cast<double>(position_equal) / total,
      ", \"teacher_forced_fraction\": ", static_cast<double>(forced_equal) / total, ", \"prefix_lengths\": [",
      infera::StrJoin(prefixes, ", "), "]}}\n");
  std::fwrite(json.data(), 1, json.size(), stdout);
  return 0;
}
