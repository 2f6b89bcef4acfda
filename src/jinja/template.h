// Template: the Jinja engine's public face — parse a template once (Parse), render it
// many times against a context of values (Render). Implements the Jinja2 language as
// published chat templates use it, rendering as Hugging Face's
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with its tojson,
// raise_exception and strftime_now does. docs/jinja.md: design, what is supported, limits.
//
// Parse checks every filter and test name against the builtins, so an unsupported
// construct is a parse error naming it and its line. Render is const and keeps no state
// between calls: one Template may render on many threads at once.
#ifndef INFERA_JINJA_TEMPLATE_H_
#define INFERA_JINJA_TEMPLATE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "jinja/ast.h"
#include "jinja/evaluator.h"
#include "jinja/value.h"

namespace infera::jinja {

class Template {
 public:
  // InvalidArgument "line N: ..." for a syntax error or an unsupported construct.
  static absl::StatusOr<Template> Parse(std::string_view source);

  // `context`: the template's variables. InvalidArgument "line N: ..." for a render
  // error: raise_exception's message, an undefined value used where one is not allowed, a
  // type error, or a RenderLimits bound.
  absl::StatusOr<std::string> Render(const ValueDict& context, const RenderOptions& options = {}) const;

  // Whether the template reads the variable `name` anywhere (chat_template.h: does it
  // render `tools`?).
  bool References(std::string_view name) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace infera::jinja

#endif  // INFERA_JINJA_TEMPLATE_H_
