// Evaluator: renders a parsed template (ast.h) against a context of values, with
// Jinja2's scoping (for loops and macros open scopes; `if` does not; namespace()
// attributes cross scopes) and Hugging Face's sandbox (templates cannot mutate lists or
// dicts). Bounded: output bytes, loop iterations, macro call depth (RenderLimits).
// One Evaluator per render; not thread-safe. docs/jinja.md.
#ifndef INFERA_JINJA_EVALUATOR_H_
#define INFERA_JINJA_EVALUATOR_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "jinja/ast.h"
#include "jinja/value.h"

namespace infera::jinja {

struct RenderLimits {
  size_t max_output_bytes = 8 << 20;  // also bounds every string a template builds
  int64_t max_loop_iterations = 1'000'000;  // all loops of one render together
  int max_call_depth = 64;                  // macro (and caller) recursion
  // Blocks and expressions being evaluated at once, macro calls included: what bounds
  // the evaluator's C++ stack (about 1 KiB a level under ASan).
  int max_render_depth = 1000;
};

struct RenderOptions {
  RenderLimits limits;
  // strftime_now(format): the local time formatted (Hugging Face's global); tests fix it.
  std::function<std::string(const std::string& format)> strftime_now;
};

class Evaluator {
 public:
  Evaluator(const ValueDict& context, const RenderOptions& options);

  // Throws Error.
  std::string Render(const Body& body);

  // For filters, tests, methods and globals.
  Value Call(const Value& callee, CallArgs& args);
  Value ApplyFilter(const std::string& name, const Value& input, CallArgs& args, int line = 0);
  bool ApplyTest(const std::string& name, const Value& input, CallArgs& args, int line = 0);
  // Python's iter(): the items a for loop visits (a dict's keys, a string's characters).
  ValueList Iterate(const Value& v);
  // A string built by a template: an Error past the output bound.
  Value MakeString(std::string s) const;
  void CountIterations(int64_t n);
  const RenderOptions& options() const { return options_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };
  using Frame = std::map<std::string, Value, std::less<>>;

  Flow Exec(const Body& body, std::string& out);
  Flow ExecNode(const Node& node, std::string& out);
  Flow ExecFor(const Node& node, std::string& out);
  void ExecSet(const Node& node, const Value& value);
  Value MakeMacro(const Node& node);
  Value Eval(const Expr& e);
  Value EvalInner(const Expr& e);
  Value Lookup(std::string_view name) const;
  void Assign(const std::string& name, Value value);
  void Append(std::string& out, std::string_view text) const;

  const RenderOptions& options_;
  std::vector<Frame> frames_;  // [0]: globals + context + top-level sets
  int64_t iterations_ = 0;
  int call_depth_ = 0;
  int render_depth_ = 0;
  friend class RenderDepthGuard;
  int loop_depth_ = 0;
};

// Attribute access (obj.name) and item access (obj[key]) as Jinja2's sandbox does them:
// a dict's keys, a string's or list's methods; missing ones are undefined.
Value GetAttr(const Value& obj, const std::string& name);
Value GetItem(const Value& obj, const Value& key);

}  // namespace infera::jinja

#endif  // INFERA_JINJA_EVALUATOR_H_
