// llm_logits: runs the paged model runner directly (no scheduler, no server) and prints
// next-token logits as JSON, for the Python reference test (tests/integration/test_llm.py).
//
//   llm_logits --model DIR --prompt 1,2,3 [--prompt 4,5 ...] [--chunk C] [--block-size B]
//              [--threads N] [--generate K] [--matmul packed|blas] [--kv-cache-dtype fp32|bf16|fp16]
//
// Every prompt is fed in chunks of C tokens (all prompts in the same steps, so chunked
// prefill of several sequences is batched), with logits taken after every chunk; blocks
// are handed out in a scrambled order so block tables are not contiguous. --generate K
// then decodes K greedy tokens for all prompts together (batched decode).
// Output: {"sequences": [{"positions": [...], "logits": [[...], ...], "generated": [...]}]}
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "common/str_cat.h"
#include "llm/llama_model_runner.h"
#include "tools/llm/tool_cli.h"

namespace {

constexpr char kUsage[] =
    "Usage: llm_logits --model DIR --prompt IDS [--prompt IDS ...] [flags]\n"
    "\n"
    "Runs the paged model runner directly (no scheduler, no server) and prints next-token\n"
    "logits as JSON: {\"sequences\": [{\"positions\", \"logits\", \"generated\"}]}\n"
    "(tests/integration/test_llm.py compares them with PyTorch).\n"
    "\n"
    "Flags:\n"
    "  --model DIR               the model folder (required)\n"
    "  --prompt IDS              comma-separated token ids, e.g. 1,2,3 (repeat: one per sequence)\n"
    "  --chunk C                 prefill chunk in tokens (all prompts in the same steps).\n"
    "                            Default: the whole prompt\n"
    "  --block-size B            KV-cache block size in tokens. Default 4\n"
    "  --threads N               intra-op threads. Default 1\n"
    "  --generate K              greedy tokens decoded after the prompts, batched. Default 0\n"
    "  --matmul packed|blas      the matmul kernel. Default packed\n"
    "  --kv-cache-dtype fp32|bf16|fp16   the KV cache's element type. Default fp32\n"
    "  -h, --help                show this help\n";

constexpr char kTool[] = "llm_logits";

std::vector<int32_t> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    ids.push_back(static_cast<int32_t>(
        infera::llm_tools::IntegerFlag(kTool, "--prompt", text.substr(pos, comma - pos), 0, INT32_MAX)));
    pos = comma + 1;
  }
  return ids;
}

struct Sequence {
  std::vector<int32_t> tokens;
  size_t prompt_len = 0;
  int64_t computed = 0;
  std::vector<int32_t> blocks;
  std::vector<int64_t> positions;
  std::vector<std::vector<float>> logits;
  std::vector<int32_t> generated;
};

}  // namespace

int main(int argc, char** argv) {
  using namespace infera::llm;
  std::string model;
  std::vector<Sequence> seqs;
  int64_t chunk = 1 << 30, block_size = 4, generate = 0;
  int threads = 1;
  MatmulKernel kernel = MatmulKernel::kPacked;
  KvCacheDtype kv_dtype = KvCacheDtype::kFloat32;
  using infera::llm_tools::FlagError;
  using infera::llm_tools::IntegerFlag;
  infera::llm_tools::HandleHelp(argc, argv, kUsage);
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag != "--model" && flag != "--prompt" && flag != "--chunk" && flag != "--block-size" &&
        flag != "--threads" && flag != "--generate" && flag != "--matmul" && flag != "--kv-cache-dtype") {
      FlagError(kTool, "unknown flag " + flag);
    }
    if (i + 1 >= argc) FlagError(kTool, flag + " needs a value");
    const std::string value = argv[i + 1];
    if (flag == "--model") model = value;
    else if (flag == "--prompt") { seqs.emplace_back(); seqs.back().tokens = ParseIds(value); }
    else if (flag == "--chunk") chunk = IntegerFlag(kTool, flag, value, 1, int64_t{1} << 30);
    else if (flag == "--block-size") block_size = IntegerFlag(kTool, flag, value, 1, 1 << 16);
    else if (flag == "--threads") threads = static_cast<int>(IntegerFlag(kTool, flag, value, 1, 1024));
    else if (flag == "--generate") generate = IntegerFlag(kTool, flag, value, 0, 1 << 20);
    else if (flag == "--matmul") {
      if (value != "packed" && value != "blas") FlagError(kTool, "--matmul: '" + value + "' is not packed or blas");
      kernel = value == "blas" ? MatmulKernel::kBlas : MatmulKernel::kPacked;
    } else {
      auto dtype = ParseKvCacheDtype(value);
      if (!dtype) FlagError(kTool, "--kv-cache-dtype: '" + value + "' is not fp32, bf16 or fp16");
      kv_dtype = *dtype;
    }
  }
  if (model.empty() || seqs.empty()) FlagError(kTool, "--model and at least one --prompt are required");
  auto runner = LlamaModelRunner::Load(model, threads, kernel);
  if (!runner.ok()) { std::cerr << runner.status() << "\n"; return 1; }
  int64_t max_tokens = 0;
  for (auto& s : seqs) {
    s.prompt_len = s.tokens.size();
    max_tokens += static_cast<int64_t>(s.tokens.size()) + generate;
  }
  const int64_t num_blocks = max_tokens / block_size + 2 * static_cast<int64_t>(seqs.size()) + 1;
  if (auto st = (*runner)->AllocateKvCache(num_blocks, block_size, kv_dtype); !st.ok()) {
    std::cerr << st << "\n";
    return 1;
  }
  // Scrambled block order: odd ids descending, then even ids ascending.
  std::vector<int32_t> free_blocks;
  for (int64_t b = num_blocks - 1; b >= 0; --b) if (b % 2) free_blocks.push_back(static_cast<int32_t>(b));
  for (int64_t b = 0; b < num_blocks; ++b) if (b % 2 == 0) free_blocks.push_back(static_cast<int32_t>(b));
  size_t next_free = 0;
  auto step_all = [&](bool decode) -> bool {
    SchedulerOutput step;
    std::vector<Sequence*> order;
    for (auto& s : seqs) {
      const int64_t known = static_cast<int64_t>(s.tokens.size());
      if (s.computed >= known) continue;
      const int64_t n = decode ? 1 : std::min<int64_t>(chunk, known - s.computed);
      while (static_cast<int64_t>(s.blocks.size()) * block_size < s.computed + n) {
        s.blocks.push_back(free_blocks[next_free++]);
      }
      ScheduledSequence seq;
      seq.request_id = order.size();
      seq.token_ids.assign(s.tokens.begin() + s.computed, s.tokens.begin() + s.computed + n);
      seq.start_position = s.computed;
      seq.block_ids = s.blocks;
      seq.sample = true;
      step.sequences.push_back(std::move(seq));
      s.computed += n;
      order.push_back(&s);
    }
    if (order.empty()) return false;
    auto out = (*runner)->Execute(step);
    if (!out.ok()) { std::cerr << out.status() << "\n"; std::exit(1); }
    for (size_t i = 0; i < order.size(); ++i) {
      const float* row = out->Row(i);
      order[i]->positions.push_back(order[i]->computed - 1);
      order[i]->logits.emplace_back(row, row + out->vocab_size);
    }
    return true;
  };
  while (step_all(false)) {}
  for (int64_t g = 0; g < generate; ++g) {
    for (auto& s : seqs) {
      const auto& last = s.logits.back();
      const int32_t next = static_cast<int32_t>(std::max_element(last.begin(), last.end()) - last.begin());
      s.generated.push_back(next);
      s.tokens.push_back(next);
    }
    if (g + 1 < generate) step_all(true);
  }
  std::string json = "{\"sequences\": [";
  for (size_t i = 0; i < seqs.size(); ++i) {
    const Sequence& s = seqs[i];
    json += infera::StrCat(i ? ", " : "", "{\"positions\": [", infera::StrJoin(s.positions, ", "),
                           "], \"generated\": [", infera::StrJoin(s.generated, ", "), "], \"logits\": [");
    for (size_t r = 0; r < s.logits.size(); ++r) {
      json += infera::StrCat(r ? ", " : "", "[", infera::StrJoin(s.logits[r], ", "), "]");
    }
    json += "]}";
  }
  json += "]}\n";
  std::fwrite(json.data(), 1, json.size(), stdout);
  return 0;
}
