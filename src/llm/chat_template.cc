#include "llm/chat_template.h"

#include "common/str_cat.h"

namespace infera::llm {
namespace {

std::string_view Trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\n\r");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\n\r") - b + 1);
}

// Qwen-style templates hard-code a default system message:
// '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n'
std::string DefaultChatMlSystem(std::string_view jinja) {
  constexpr std::string_view kOpen = "<|im_start|>system\\n";
  const size_t at = jinja.find(kOpen);
  if (at == std::string_view::npos) return "";
  const size_t start = at + kOpen.size();
  const size_t end = jinja.find("<|im_end|>", start);
  if (end == std::string_view::npos) return "";
  std::string_view text = jinja.substr(start, end - start);
  if (text.find("{{") != std::string_view::npos || text.find('\'') != std::string_view::npos) return "";
  return std::string(text);
}

}  // namespace

absl::StatusOr<ChatTemplate> ChatTemplate::Detect(std::string_view jinja, std::string bos,
                                                  std::string eos) {
  if (jinja.empty()) {
    return absl::FailedPreconditionError(
        "this model has no chat_template in tokenizer_config.json; use /v1/completions");
  }
  ChatTemplate t;
  t.bos_ = std::move(bos);
  t.eos_ = std::move(eos);
  if (jinja.find("<|start_header_id|>") != std::string_view::npos) {
    t.kind_ = Kind::kLlama3;
  } else if (jinja.find("<|im_start|>") != std::string_view::npos) {
    t.kind_ = Kind::kChatMl;
    t.default_system_ = DefaultChatMlSystem(jinja);
  } else if (jinja.find("[INST]") != std::string_view::npos) {
    t.kind_ = jinja.find("<<SYS>>") != std::string_view::npos ? Kind::kLlama2 : Kind::kMistral;
  } else {
    return absl::InvalidArgumentError(
        "this model's chat_template is not one of the supported families (Llama-2, Llama-3, "
        "ChatML/Qwen, Mistral); use /v1/completions with a formatted prompt");
  }
  return t;
}

std::string_view ChatTemplate::name() const {
  switch (kind_) {
    case Kind::kLlama3: return "llama-3";
    case Kind::kChatMl: return "chatml";
    case Kind::kLlama2: return "llama-2";
    case Kind::kMistral: return "mistral";
  }
  return "";
}

size_t ChatTemplate::MinRenderedBytes(const std::vector<ChatMessage>& messages) {
  size_t bytes = 0;
  for (const ChatMessage& m : messages) {
    if (m.role != "system") bytes += Trim(m.content).size();
  }
  return bytes;
}

absl::StatusOr<std::string> ChatTemplate::Render(const std::vector<ChatMessage>& messages,
                                                 bool add_generation_prompt) const {
  if (messages.empty()) return absl::InvalidArgumentError("messages must not be empty");
  for (const ChatMessage& m : messages) {
    if (m.role != "system" && m.role != "user" && m.role != "assistant") {
      return absl::InvalidArgumentError(StrCat("message role '", m.role, "' is not supported (system, user, assistant)"));
    }
  }
  std::string out;
  switch (kind_) {
    case Kind::kLlama3:
      out = bos_;
      for (const ChatMessage& m : messages) {
        StrAppend(&out, "<|start_header_id|>", m.role, "<|end_header_id|>\n\n", Trim(m.content), "<|eot_id|>");
      }
      if (add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
      return out;
    case Kind::kChatMl:
      if (messages.front().role != "system" && !default_system_.empty()) {
        StrAppend(&out, "<|im_start|>system\n", default_system_, "<|im_end|>\n");
      }
      for (const ChatMessage& m : messages) StrAppend(&out, "<|im_start|>", m.role, "\n", m.content, "<|im_end|>\n");
      if (add_generation_prompt) out += "<|im_start|>assistant\n";
      return out;
    case Kind::kLlama2:
    case Kind::kMistral: {
      std::string system;
      size_t first = 0;
      if (messages.front().role == "system") system = messages.front().content, first = 1;
      bool first_user = true;
      if (kind_ == Kind::kMistral) out = bos_;
      for (size_t i = first; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        if (m.role == "system") return absl::InvalidArgumentError("only the first message may be a system message");
        if (m.role == "user") {
          std::string content = m.content;
          if (first_user && !system.empty()) {
            content = kind_ == Kind::kLlama2 ? StrCat("<<SYS>>\n", system, "\n<</SYS>>\n\n", content)
                                             : StrCat(system, "\n\n", content);
          }
          first_user = false;
          if (kind_ == Kind::kLlama2) StrAppend(&out, bos_, "[INST] ", Trim(content), " [/INST]");
          else StrAppend(&out, "[INST] ", content, " [/INST]");
        } else if (kind_ == Kind::kLlama2) {
          StrAppend(&out, " ", Trim(m.content), " ", eos_);
        } else {
          StrAppend(&out, m.content, eos_);
        }
      }
      return out;
    }
  }
  return out;
}

}  // namespace infera::llm
