// grammar_bench: the cost of structured output (docs/structured_output.md, "Cost").
//
//   grammar_bench --mask [--corpus FILE,...]
//       Token masks in process. Vocabularies: the bench model's (256 byte tokens, 32000
//       logits) and two BPE-like ones of 32k and 128k entries made of the corpus's most
//       frequent 2..12-byte n-grams plus every byte (no real large tokenizer is on the
//       machine). A JSON document is cut into tokens greedily (longest match) and walked
//       through the JSON grammar (llama.cpp's json.gbnf) and a schema-like object
//       grammar; per token it times AcceptToken, the mask computed from scratch, and the
//       mask through the per-state cache. Prints one JSON line per vocabulary x grammar.
//   grammar_bench --model DIR [--threads N] [--tokens 64] [--rounds 3]
//       Decode throughput of the real engine (LlamaModelRunner on DIR, e.g. the bench
//       model's bench_nocache/1) at C=1 and C=16, unconstrained and under a JSON grammar
//       that never ends (a stream of JSON values: every token needs the grammar), each
//       request generating exactly --tokens tokens (ignore_eos), greedy and temperature 1;
//       A/B interleaved for --rounds rounds. Prints one JSON line per configuration.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "grammar/compiled_grammar.h"
#include "grammar/grammar_matcher.h"
#include "llm/llama_model_runner.h"
#include "llm/llm_engine.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace infera;

constexpr char kJsonGbnf[] = R"(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)";

// What a JSON-schema compiler makes of {name: string, age: integer, tags: [string],
// address: {street, city}} (properties in order, no extra whitespace choices).
constexpr char kSchemaGbnf[] = R"(
root ::= "{" ws "\"name\"" ws ":" ws string "," ws "\"age\"" ws ":" ws integer "," ws "\"tags\"" ws ":" ws tags "," ws "\"address\"" ws ":" ws address ws "}"
address ::= "{" ws "\"street\"" ws ":" ws string "," ws "\"city\"" ws ":" ws string ws "}"
tags ::= "[" ws (string ("," ws string)*)? ws "]"
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\""
integer ::= "-"? ([0-9] | [1-9] [0-9]{1,15})
ws ::= [ \t\n]{0,4}
)";

// Never terminates: every token of a long generation goes through the grammar.
constexpr char kJsonStreamGbnf[] = R"(
root   ::= "[" ws value ("," ws value)*
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)";

constexpr char kDocument[] =
    R"({"name": "Ada Lovelace", "age": 36, "tags": ["mathematician", "writer", "analyst"], "address": {"street": "12 St James's Square", "city": "London"}})";

double Us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

struct Stats {
  double mean, p50, p99, max;
};
Stats Summarise(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return {sum / v.size(), v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)], v.back()};
}
std::string Json(const Stats& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, R"({"mean": %.1f, "p50": %.1f, "p99": %.1f, "max": %.1f})", s.mean, s.p50, s.p99,
                s.max);
  return buf;
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
  return out;
}

// Every byte, then the corpus's most frequent n-grams (2..12 bytes) up to `size`
// entries; `logits` ids in all (the rest write nothing), id 2 the end token.
std::shared_ptr<const grammar::TokenVocabulary> NgramVocabulary(const std::string& corpus, size_t size,
                                                                size_t logits) {
  std::unordered_map<std::string, int64_t> counts;
  for (size_t n = 2; n <= 12; ++n) {
    for (size_t i = 0; i + n <= corpus.size(); ++i) ++counts[corpus.substr(i, n)];
  }
  std::vector<std::pair<int64_t, std::string>> ranked;
  ranked.reserve(counts.size());
  for (auto& [s, c] : counts) {
    if (c >= 3) ranked.push_back({c * static_cast<int64_t>(s.size() - 1), s});
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> bytes(std::max(logits, size));
  for (int b = 0; b < 256; ++b) bytes[b + 3] = std::string(1, static_cast<char>(b));
  size_t id = 259;
  for (const auto& [score, s] : ranked) {
    if (id >= size) break;
    bytes[id++] = s;
  }
  return std::make_shared<const grammar::TokenVocabulary>(std::move(bytes), std::vector<int32_t>{2});
}

std::shared_ptr<const grammar::TokenVocabulary> ByteVocabulary(size_t logits) {
  std::vector<std::string> bytes(logits);
  for (int b = 0; b < 256; ++b) bytes[b] = std::string(1, static_cast<char>(b));
  return std::make_shared<const grammar::TokenVocabulary>(std::move(bytes), std::vector<int32_t>{256});
}

// Longest-match tokenisation through the trie.
std::vector<int32_t> Tokenise(const grammar::TokenVocabulary& v, std::string_view text) {
  std::vector<int32_t> ids;
  for (size_t pos = 0; pos < text.size();) {
    int32_t node = 0, best = -1;
    size_t best_len = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      const auto& n = v.nodes()[node];
      int32_t next = -1;
      for (int32_t c = n.first_child; c < n.first_child + n.num_children; ++c) {
        if (v.nodes()[c].byte == static_cast<uint8_t>(text[i])) next = c;
      }
      if (next < 0) break;
      node = next;
      if (v.nodes()[node].num_tokens > 0) {
        best = v.token_order()[v.nodes()[node].first_token];
        best_len = i - pos + 1;
      }
    }
    ids.push_back(best);
    pos += best_len;
  }
  return ids;
}

void MaskBench(const std::vector<std::string>& corpus_files) {
  std::string corpus;
  for (const std::string& f : corpus_files) {
    std::ifstream in(f, std::ios::binary);
    corpus += std::string(std::istreambuf_iterator<char>(in), {});
  }
  corpus.resize(std::min<size_t>(corpus.size(), 1 << 20));
  struct Vocab {
    std::string name;
    std::shared_ptr<const grammar::TokenVocabulary> v;
  };
  std::vector<Vocab> vocabs = {{"bench_model_bytes_256_of_32000", ByteVocabulary(32000)}};
  for (size_t size : {32000, 128000}) {
    const auto t0 = Clock::now();
    auto v = NgramVocabulary(corpus, size, size);
    std::fprintf(stderr, "vocabulary %zu built in %.1f s (%zu trie nodes)\n", size,
                 std::chrono::duration<double>(Clock::now() - t0).count(), v->nodes().size());
    vocabs.push_back({"ngram_" + std::to_string(size / 1000) + "k", v});
  }
  for (const Vocab& vocab : vocabs) {
    for (const auto& [gname, gbnf] : std::vector<std::pair<std::string, const char*>>{{"json", kJsonGbnf},
                                                                                       {"schema", kSchemaGbnf}}) {
      const auto t0 = Clock::now();
      auto g = grammar::CompiledGrammar::Compile(gbnf, vocab.v);
      const double compile_us = Us(Clock::now() - t0);
      if (!g.ok()) {
        std::cerr << g.status() << "\n";
        continue;
      }
      const std::vector<int32_t> ids = Tokenise(*vocab.v, kDocument);
      std::vector<double> accept, cold, cached;
      for (int round = 0; round < 2; ++round) {  // round 1: the cache is warm
        grammar::GrammarMatcher m(*g);
        for (int32_t id : ids) {
          grammar::TokenMask mask;
          auto a = Clock::now();
          m.FillNextTokenMask(mask);
          auto b = Clock::now();
          if (round == 0) {
            grammar::TokenMask fresh;
            auto c = Clock::now();
            m.ComputeNextTokenMask(fresh);
            cold.push_back(Us(Clock::now() - c));
          } else {
            cached.push_back(Us(b - a));
          }
          if (!grammar::MaskHas(mask, id)) std::cerr << "token " << id << " not in its mask\n";
          auto d = Clock::now();
          if (!m.AcceptToken(id)) std::cerr << "token " << id << " refused\n";
          if (round == 1) accept.push_back(Us(Clock::now() - d));
        }
      }
      std::printf(
          R"({"vocabulary": "%s", "grammar": "%s", "tokens": %zu, "compile_us": %.0f, "accept_us": %s, "mask_uncached_us": %s, "mask_cached_us": %s, "cache_entries": %lld})"
          "\n",
          vocab.name.c_str(), gname.c_str(), ids.size(), compile_us, Json(Summarise(accept)).c_str(),
          Json(Summarise(cold)).c_str(), Json(Summarise(cached)).c_str(),
          static_cast<long long>((*g)->cache_stats().entries));
      std::fflush(stdout);
    }
  }
}

struct Done {
  absl::Mutex mu;
  int remaining = 0;
  int64_t tokens = 0;
};

void EngineBench(const std::string& model, int threads, int64_t tokens, int rounds) {
  auto tokenizer = text::Tokenizer::Load(model);
  if (!tokenizer.ok()) {
    std::cerr << tokenizer.status() << "\n";
    return;
  }
  auto runner = llm::LlamaModelRunner::Load(model, threads);
  if (!runner.ok()) {
    std::cerr << runner.status() << "\n";
    return;
  }
  llm::EngineOptions o;
  o.block_size = 16;
  o.num_blocks = 512;
  o.enable_prefix_caching = false;
  o.scheduler.max_num_seqs = 16;
  o.scheduler.max_num_batched_tokens = 1024;
  o.scheduler.max_model_len = 2048;
  o.scheduler.eos_token_ids = (*tokenizer)->eos_token_ids();
  if (!(*runner)->AllocateKvCache(o.num_blocks, o.block_size, llm::kDefaultKvCacheDtype).ok()) return;
  auto engine = llm::LlmEngine::Create(o, *std::move(runner), tokenizer->get());
  if (!engine.ok()) {
    std::cerr << engine.status() << "\n";
    return;
  }
  const std::vector<int32_t> prompt = (*tokenizer)->Encode("Write the records as JSON: ", false);
  std::map<std::string, std::vector<double>> rates;
  for (int round = 0; round < rounds; ++round) {
    for (int c : {1, 16}) {
      for (double temperature : {0.0, 1.0}) {
        for (bool constrained : {false, true}) {
          Done done;
          done.remaining = c;
          const auto t0 = Clock::now();
          for (int i = 0; i < c; ++i) {
            llm::GenerateRequest r;
            r.prompt_token_ids = prompt;
            r.sampling.temperature = temperature;
            r.sampling.seed = 1000 * round + i;
            r.sampling.max_tokens = tokens;
            r.sampling.ignore_eos = true;
            if (constrained) {
              r.sampling.grammar = kJsonStreamGbnf;
              r.sampling.constraint_kind = "grammar";
            }
            absl::Status s = (*engine)->AddRequest(std::move(r), [&done](llm::RequestOutput out) {
              absl::MutexLock lock(&done.mu);
              done.tokens += static_cast<int64_t>(out.token_ids.size());
              if (out.finish_reason != infera::FinishReason::kNone) --done.remaining;
            });
            if (!s.ok()) std::cerr << s << "\n";
          }
          {
            absl::MutexLock lock(&done.mu);
            done.mu.Await(absl::Condition(+[](Done* d) { return d->remaining == 0; }, &done));
          }
          const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
          char key[96];
          std::snprintf(key, sizeof key, R"("concurrency": %d, "temperature": %.0f, "grammar": %s)", c, temperature,
                        constrained ? "true" : "false");
          rates[key].push_back(static_cast<double>(done.tokens) / seconds);
        }
      }
    }
  }
  for (const auto& [key, r] : rates) {
    std::vector<double> sorted = r;
    std::sort(sorted.begin(), sorted.end());
    std::printf(R"({%s, "tok_s_median": %.1f, "tok_s_all": [)", key.c_str(), sorted[sorted.size() / 2]);
    for (size_t i = 0; i < r.size(); ++i) std::printf("%s%.1f", i ? ", " : "", r[i]);
    std::printf("]}\n");
  }
  const llm::LlmMetrics::GrammarStats g = (*engine)->GrammarMetrics();
  std::printf(R"({"grammar_tokens": %llu, "grammar_seconds_mean_us": %.1f, "grammar_seconds_p50_us": %.1f, "grammar_seconds_p99_us": %.1f})"
              "\n",
              static_cast<unsigned long long>(g.mask_time.count), 1e6 * g.mask_time.sum / std::max<uint64_t>(1, g.mask_time.count),
              1e6 * g.mask_time.Quantile(0.5), 1e6 * g.mask_time.Quantile(0.99));
}

}  // namespace

int main(int argc, char** argv) {
  std::string model;
  std::vector<std::string> corpus;
  bool mask = false;
  int threads = 1, rounds = 3;
  int64_t tokens = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--mask") mask = true;
    else if (a == "--corpus") corpus = Split(next());
    else if (a == "--model") model = next();
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--tokens") tokens = std::stoll(next());
    else if (a == "--rounds") rounds = std::stoi(next());
    else {
      std::cerr << "unknown flag " << a << "\n";
      return 2;
    }
  }
  if (mask) MaskBench(corpus.empty() ? std::vector<std::string>{"README.md"} : corpus);
  if (!model.empty()) EngineBench(model, threads, tokens, rounds);
  return 0;
}
