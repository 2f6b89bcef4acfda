// Fuzz target: the Jinja engine (src/jinja, docs/jinja.md): the input is a template's
// text, parsed and — when it parses — rendered against a fixed chat-like context
// (messages with tool calls, tools, a namespace-friendly mix of types) with small
// render limits, so that loops, recursion and output growth hit their bounds quickly.
// Invariants beyond "no crash, no sanitizer report": a render never returns more than
// max_output_bytes, and parse/render errors are InvalidArgument.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "jinja/builtins.h"
#include "jinja/template.h"

namespace {

const infera::jinja::ValueDict& Context() {
  static const auto* context = new infera::jinja::ValueDict(infera::jinja::FromJson(R"({
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": "Weather in Paris? Grüße 🙂"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "abc123xyz", "type": "function",
        "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": [1, 2.5, true, null]}}}]},
      {"role": "tool", "tool_call_id": "abc123xyz", "content": "21 degrees"},
      {"role": "assistant", "content": "<think>\nok\n</think>\n\nIt is 21."}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
    "documents": null, "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>",
    "n": 3, "f": -1.5, "s": "a,b,c"})").as_dict());
  return *context;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;
  auto tmpl = infera::jinja::Template::Parse(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!tmpl.ok()) {
    if (tmpl.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  infera::jinja::RenderOptions options;
  options.limits.max_output_bytes = 64 * 1024;
  options.limits.max_loop_iterations = 20000;
  options.limits.max_call_depth = 16;
  options.strftime_now = [](const std::string&) { return std::string("01 Aug 2025"); };
  auto out = tmpl->Render(Context(), options);
  if (out.ok() && out->size() > options.limits.max_output_bytes) std::abort();
  if (!out.ok() && out.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
  return 0;
}
