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

namespace {

std::vector<int32_t> ParseIds(const std::string& text) {
  std::vector<int32_t> ids;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    ids.push_back(std::stoi(text.substr(pos, comma - pos)));
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
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--model") model = value;
    else if (flag == "--prompt") { seqs.emplace_back(); seqs.back().tokens = ParseIds(value); }
    else if (flag == "--chunk") chunk = std::stoll(value);
    else if (flag == "--block-size") block_size = std::stoll(value);
    else if (flag == "--threads") threads = std::stoi(value);
    else if (flag == "--generate") generate = std::stoll(value);
    else if (flag == "--matmul") kernel = value == "blas" ? MatmulKernel::kBlas : MatmulKernel::kPacked;
    else if (flag == "--kv-cache-dtype") {
      auto dtype = ParseKvCacheDtype(value);
      if (!dtype) { std::cerr << "--kv-cache-dtype: '" << value << "' is not fp32, bf16 or fp16\n"; return 2; }
      kv_dtype = *dtype;
    }
    else { std::cerr << "unknown flag " << flag << "\n"; return 2; }
  }
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
