#include "llm/draft_model_loader.h"

#include <system_error>

#include "common/str_cat.h"

namespace infera::llm {
namespace {

absl::Status Bad(std::string_view dir, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("parameter speculative_model: draft model '", dir, "': ", why));
}

// True when `path` is `root` or below it (both canonical).
bool Inside(const std::filesystem::path& path, const std::filesystem::path& root) {
  auto p = path.begin();
  for (auto r = root.begin(); r != root.end(); ++r, ++p) {
    if (p == path.end() || *p != *r) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::unique_ptr<LlamaModelRunner>> LoadDraftModel(const std::filesystem::path& version_dir,
                                                                 const LlmModelOptions& options,
                                                                 const Tokenizer& target_tokenizer,
                                                                 int64_t target_vocab_size, int num_threads) {
  const std::string& rel = options.speculative.draft_model_dir;
  std::error_code ec;
  const std::filesystem::path model_root = std::filesystem::canonical(version_dir.parent_path(), ec);
  if (ec) return Bad(rel, StrCat("cannot resolve the model directory: ", ec.message()));
  const std::filesystem::path dir = std::filesystem::canonical(version_dir / rel, ec);
  if (ec) return Bad(rel, StrCat("no such directory in the version directory (", ec.message(), ")"));
  if (!Inside(dir, model_root)) return Bad(rel, "resolves (through a symlink) outside the model's directory");
  if (!std::filesystem::is_directory(dir, ec)) return Bad(rel, "is not a directory");
  if (!std::filesystem::exists(dir / "config.json", ec)) {
    return Bad(rel, "has no config.json (a Llama-family Hugging Face model directory is expected)");
  }
  absl::StatusOr<std::unique_ptr<LlamaModelRunner>> runner = LlamaModelRunner::Load(dir, options, num_threads);
  if (!runner.ok()) return Bad(rel, StrCat("does not load: ", runner.status().message()));
  const int64_t draft_vocab = (*runner)->vocab_size();
  if (draft_vocab != target_vocab_size) {
    return Bad(rel, StrCat("its vocabulary has ", draft_vocab, " tokens, the target's ", target_vocab_size,
                           " (a draft must share the target's vocabulary)"));
  }
  if (std::filesystem::exists(dir / "tokenizer.json", ec)) {
    absl::StatusOr<std::unique_ptr<Tokenizer>> draft_tokenizer = Tokenizer::Load(dir);
    if (!draft_tokenizer.ok()) return Bad(rel, StrCat("its tokenizer does not load: ", draft_tokenizer.status().message()));
    const Tokenizer& d = **draft_tokenizer;
    if (d.vocab_size() != target_tokenizer.vocab_size()) {
      return Bad(rel, StrCat("its tokenizer has ", d.vocab_size(), " tokens, the target's ",
                             target_tokenizer.vocab_size(), " (a draft must share the target's vocabulary)"));
    }
    for (int32_t id = 0; id < d.vocab_size(); ++id) {
      if (d.TokenBytes(id) != target_tokenizer.TokenBytes(id) || d.IsSpecial(id) != target_tokenizer.IsSpecial(id)) {
        return Bad(rel, StrCat("its tokenizer's token ", id, " differs from the target's (a draft must share the ",
                               "target's vocabulary)"));
      }
    }
  }
  return runner;
}

}  // namespace infera::llm
