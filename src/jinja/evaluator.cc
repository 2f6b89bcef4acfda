#include "jinja/evaluator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "jinja/builtins.h"

namespace infera::jinja {
namespace {

[[noreturn]] void ThrowUndefined(const Value& v) { throw Error(v.undefined_hint()); }

std::string ObjectName(const Value& v) {
  return v.is_namespace() ? "Namespace object" : std::string(v.TypeName()) + " object";
}

// Python's slice indices for a sequence of `size`.
std::vector<size_t> SliceIndices(int64_t size, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto as_index = [](const Value& v, const char* what) -> std::optional<int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    if (!v.is_int() && !v.is_bool()) throw Error(std::string("slice ") + what + " must be an integer or none");
    return v.as_int();
  };
  const int64_t step = as_index(step_v, "step").value_or(1);
  if (step == 0) throw Error("slice step cannot be zero");
  auto clamp = [&](std::optional<int64_t> i, int64_t fallback) {
    if (!i) return fallback;
    int64_t v = *i;
    if (v < 0) v += size;
    if (step > 0) return std::min(std::max<int64_t>(v, 0), size);
    return std::min(std::max<int64_t>(v, -1), size - 1);
  };
  const int64_t start = clamp(as_index(start_v, "start"), step > 0 ? 0 : size - 1);
  const int64_t stop = clamp(as_index(stop_v, "stop"), step > 0 ? size : -1);
  std::vector<size_t> out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(static_cast<size_t>(i));
  return out;
}

int64_t CheckedInt(long double v, const char* op) {
  if (v > static_cast<long double>(std::numeric_limits<int64_t>::max()) ||
      v < static_cast<long double>(std::numeric_limits<int64_t>::min())) {
    throw Error(std::string("integer overflow in '") + op + "'");
  }
  return static_cast<int64_t>(v);
}

}  // namespace

class RenderDepthGuard {
 public:
  explicit RenderDepthGuard(Evaluator& ev) : ev_(ev) {
    if (++ev_.render_depth_ > ev_.options_.limits.max_render_depth) {
      --ev_.render_depth_;
      throw Error("template evaluation nests deeper than " + std::to_string(ev_.options_.limits.max_render_depth) +
                  " levels");
    }
  }
  ~RenderDepthGuard() { --ev_.render_depth_; }

 private:
  Evaluator& ev_;
};

Value GetAttr(const Value& obj, const std::string& name) {
  if (obj.is_undefined()) ThrowUndefined(obj);
  if (obj.is_dict()) {
    if (!obj.is_namespace()) {
      Value method = FindMethod(obj, name);
      if (!method.is_undefined()) return method;
    }
    if (const Value* v = obj.Find(name)) return *v;
  } else {
    Value method = FindMethod(obj, name);
    if (!method.is_undefined()) return method;
  }
  return Value::Undefined("'" + ObjectName(obj) + "' has no attribute '" + name + "'");
}

Value GetItem(const Value& obj, const Value& key) {
  if (obj.is_undefined()) ThrowUndefined(obj);
  if (obj.is_dict() && key.is_string()) {
    if (const Value* v = obj.Find(key.as_string())) return *v;
    if (!obj.is_namespace()) {
      Value method = FindMethod(obj, key.as_string());
      if (!method.is_undefined()) return method;
    }
  } else if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    if (obj.is_list()) {
      const int64_t size = static_cast<int64_t>(obj.as_list().size());
      int64_t i = key.as_int() < 0 ? key.as_int() + size : key.as_int();
      if (i >= 0 && i < size) return obj.as_list()[i];
    } else {
      const auto cps = CodePoints(obj.as_string());
      const int64_t size = static_cast<int64_t>(cps.size());
      int64_t i = key.as_int() < 0 ? key.as_int() + size : key.as_int();
      if (i >= 0 && i < size) return Value::String(std::string(cps[i]));
    }
  } else if (key.is_string()) {
    return GetAttr(obj, key.as_string());
  }
  return Value::Undefined("'" + ObjectName(obj) + "' has no element " + key.Repr());
}

Evaluator::Evaluator(const ValueDict& context, const RenderOptions& options) : options_(options) {
  frames_.emplace_back();
  for (auto& [k, v] : Globals()) frames_[0][k] = v;
  for (const auto& [k, v] : context) frames_[0][k] = v;
}

std::string Evaluator::Render(const Body& body) {
  std::string out;
  Exec(body, out);
  return out;
}

void Evaluator::Append(std::string& out, std::string_view text) const {
  if (out.size() + text.size() > options_.limits.max_output_bytes) {
    throw Error("rendered output exceeds " + std::to_string(options_.limits.max_output_bytes) + " bytes");
  }
  out.append(text);
}

Value Evaluator::MakeString(std::string s) const {
  if (s.size() > options_.limits.max_output_bytes) {
    throw Error("a string exceeds " + std::to_string(options_.limits.max_output_bytes) + " bytes");
  }
  return Value::String(std::move(s));
}

void Evaluator::CountIterations(int64_t n) {
  iterations_ += n;
  if (iterations_ > options_.limits.max_loop_iterations) {
    throw Error("template exceeds " + std::to_string(options_.limits.max_loop_iterations) + " loop iterations");
  }
}

Value Evaluator::Lookup(std::string_view name) const {
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end()) return found->second;
  }
  return Value::Undefined("'" + std::string(name) + "' is undefined");
}

void Evaluator::Assign(const std::string& name, Value value) { frames_.back()[name] = std::move(value); }

Evaluator::Flow Evaluator::Exec(const Body& body, std::string& out) {
  for (const NodePtr& node : body) {
    Flow flow;
    try {
      flow = ExecNode(*node, out);
    } catch (Error& e) {
      if (e.line() == 0) e.set_line(node->line);
      throw;
    }
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Evaluator::Flow Evaluator::ExecNode(const Node& node, std::string& out) {
  RenderDepthGuard guard(*this);
  switch (node.kind) {
    case Node::Kind::kText: Append(out, node.text); break;
    case Node::Kind::kOutput: Append(out, Eval(*node.expr).Str()); break;
    case Node::Kind::kIf: {
      for (const auto& [condition, body] : node.branches) {
        if (Eval(*condition).Truthy()) return Exec(body, out);
      }
      return Exec(node.else_body, out);
    }
    case Node::Kind::kFor: return ExecFor(node, out);
    case Node::Kind::kSet: ExecSet(node, Eval(*node.expr)); break;
    case Node::Kind::kSetBlock: {
      std::string captured;
      Exec(node.body, captured);
      Assign(node.targets[0], Value::String(std::move(captured)));
      break;
    }
    case Node::Kind::kMacro: Assign(node.text, MakeMacro(node)); break;
    case Node::Kind::kCallBlock: {
      // caller(): the block's body rendered in the call site's scopes.
      auto site = std::make_shared<std::vector<Frame>>(frames_);
      const Node* block = &node;
      Value caller = Value::Callable("caller", [block, site](Evaluator& ev, CallArgs& args) {
        std::vector<Frame> saved = std::move(ev.frames_);
        ev.frames_ = *site;
        ev.frames_.emplace_back();
        for (size_t i = 0; i < block->params.size(); ++i) {
          const MacroParam& p = block->params[i];
          Value v = args.Get(i, p.name);
          if (v.is_undefined() && p.default_value) v = ev.Eval(*p.default_value);
          ev.frames_.back()[p.name] = v;
        }
        std::string text;
        try {
          if (++ev.call_depth_ > ev.options_.limits.max_call_depth) {
            throw Error("macro calls nest deeper than " + std::to_string(ev.options_.limits.max_call_depth));
          }
          ev.Exec(block->body, text);
        } catch (...) {
          --ev.call_depth_;
          ev.frames_ = std::move(saved);
          throw;
        }
        --ev.call_depth_;
        ev.frames_ = std::move(saved);
        return Value::String(std::move(text));
      });
      frames_.emplace_back();
      frames_.back()["caller"] = caller;
      Value result;
      try {
        result = Eval(*node.expr);
      } catch (...) {
        frames_.pop_back();
        throw;
      }
      frames_.pop_back();
      Append(out, result.Str());
      break;
    }
    case Node::Kind::kFilterBlock: {
      std::string captured;
      Exec(node.body, captured);
      // The chain's innermost filter has no input: the captured text is it.
      std::vector<const Expr*> chain;
      for (const Expr* e = node.expr.get(); e; e = e->args.empty() ? nullptr : e->args[0].get()) chain.push_back(e);
      Value v = Value::String(std::move(captured));
      for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        CallArgs args;
        for (size_t i = 1; i < (*it)->args.size(); ++i) args.positional.push_back(Eval(*(*it)->args[i]));
        for (const auto& [k, e] : (*it)->kwargs) args.keyword.emplace_back(k, Eval(*e));
        v = ApplyFilter((*it)->name, v, args, (*it)->line);
      }
      Append(out, v.Str());
      break;
    }
    case Node::Kind::kBreak:
      if (loop_depth_ == 0) throw Error("'break' outside a loop");
      return Flow::kBreak;
    case Node::Kind::kContinue:
      if (loop_depth_ == 0) throw Error("'continue' outside a loop");
      return Flow::kContinue;
    case Node::Kind::kScope: return Exec(node.body, out);
  }
  return Flow::kNormal;
}

Evaluator::Flow Evaluator::ExecFor(const Node& node, std::string& out) {
  const Value iterable = Eval(*node.expr);
  if (!iterable.is_undefined() && !iterable.is_list() && !iterable.is_dict() && !iterable.is_string() &&
      !iterable.is_iterator()) {
    throw Error("'" + std::string(iterable.TypeName()) + "' object is not iterable");
  }
  ValueList items = Iterate(iterable);
  frames_.emplace_back();
  auto bind = [&](const Value& item) {
    if (node.targets.size() == 1) {
      frames_.back()[node.targets[0]] = item;
      return;
    }
    ValueList parts = Iterate(item);
    if (parts.size() != node.targets.size()) {
      throw Error("cannot unpack " + std::to_string(parts.size()) + " values into " +
                  std::to_string(node.targets.size()) + " loop variables");
    }
    for (size_t i = 0; i < parts.size(); ++i) frames_.back()[node.targets[i]] = parts[i];
  };
  ++loop_depth_;
  try {
    if (node.filter) {
      ValueList kept;
      for (const Value& item : items) {
        CountIterations(1);
        bind(item);
        if (Eval(*node.filter).Truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t i = 0; i < n; ++i) {
      CountIterations(1);
      ValueDict loop = {{"index", Value::Int(i + 1)},   {"index0", Value::Int(i)},
                        {"revindex", Value::Int(n - i)}, {"revindex0", Value::Int(n - i - 1)},
                        {"first", Value::Bool(i == 0)},  {"last", Value::Bool(i == n - 1)},
                        {"length", Value::Int(n)},       {"depth", Value::Int(1)},
                        {"depth0", Value::Int(0)}};
      if (i > 0) loop.emplace_back("previtem", items[i - 1]);
      if (i + 1 < n) loop.emplace_back("nextitem", items[i + 1]);
      loop.emplace_back("cycle", Value::Callable("loop.cycle", [i](Evaluator&, CallArgs& args) {
                          if (args.positional.empty()) throw Error("no items for cycling given");
                          return args.positional[i % args.positional.size()];
                        }));
      frames_.back() = Frame();
      frames_.back()["loop"] = Value::Dict(std::move(loop));
      bind(items[i]);
      if (Exec(node.body, out) == Flow::kBreak) break;
    }
    if (n == 0) {
      frames_.back() = Frame();
      Exec(node.else_body, out);
    }
  } catch (...) {
    --loop_depth_;
    frames_.pop_back();
    throw;
  }
  --loop_depth_;
  frames_.pop_back();
  return Flow::kNormal;
}

void Evaluator::ExecSet(const Node& node, const Value& value) {
  if (!node.attr.empty()) {
    const Value target = Lookup(node.targets[0]);
    if (!target.is_namespace()) throw Error("cannot assign attribute on non-namespace object");
    target.Set(node.attr, value);
    return;
  }
  if (node.targets.size() == 1) {
    Assign(node.targets[0], value);
    return;
  }
  ValueList parts = Iterate(value);
  if (parts.size() != node.targets.size()) {
    throw Error("cannot unpack " + std::to_string(parts.size()) + " values into " +
                std::to_string(node.targets.size()) + " names");
  }
  for (size_t i = 0; i < parts.size(); ++i) Assign(node.targets[i], parts[i]);
}

Value Evaluator::MakeMacro(const Node& node) {
  const Node* macro = &node;
  // A macro defined inside a loop or another macro sees the variables around it then.
  auto closure = std::make_shared<Frame>();
  for (size_t i = 1; i < frames_.size(); ++i) {
    for (const auto& [k, v] : frames_[i]) (*closure)[k] = v;
  }
  return Value::Callable(node.text, [macro, closure](Evaluator& ev, CallArgs& args) {
    if (args.positional.size() > macro->params.size()) {
      throw Error("macro '" + macro->text + "' takes " + std::to_string(macro->params.size()) +
                  " arguments, got " + std::to_string(args.positional.size()));
    }
    Frame frame;
    for (size_t i = 0; i < macro->params.size(); ++i) {
      const MacroParam& p = macro->params[i];
      Value v = args.Get(i, p.name);
      if (v.is_undefined() && i >= args.positional.size() && p.default_value) v = ev.Eval(*p.default_value);
      if (v.is_undefined()) v = Value::Undefined("parameter '" + p.name + "' was not provided");
      frame[p.name] = v;
    }
    for (const auto& [k, v] : args.keyword) {
      bool known = false;
      for (const MacroParam& p : macro->params) known = known || p.name == k;
      if (!known) throw Error("macro '" + macro->text + "' takes no keyword argument '" + k + "'");
    }
    // The caller of a {% call %} block stays visible inside the macro.
    Value caller = ev.Lookup("caller");
    if (!caller.is_undefined()) frame["caller"] = caller;
    if (++ev.call_depth_ > ev.options_.limits.max_call_depth) {
      --ev.call_depth_;
      throw Error("macro calls nest deeper than " + std::to_string(ev.options_.limits.max_call_depth));
    }
    std::vector<Frame> saved(ev.frames_.begin() + 1, ev.frames_.end());
    ev.frames_.resize(1);
    ev.frames_.push_back(*closure);
    ev.frames_.push_back(std::move(frame));
    const int saved_loops = ev.loop_depth_;
    ev.loop_depth_ = 0;
    std::string text;
    auto restore = [&] {
      --ev.call_depth_;
      ev.loop_depth_ = saved_loops;
      ev.frames_.resize(1);
      for (Frame& f : saved) ev.frames_.push_back(std::move(f));
    };
    try {
      ev.Exec(macro->body, text);
    } catch (...) {
      restore();
      throw;
    }
    restore();
    return Value::String(std::move(text));
  });
}

ValueList Evaluator::Iterate(const Value& v) {
  ValueList out;
  if (v.is_undefined()) return out;
  if (v.is_list()) return v.as_list();
  if (v.is_iterator()) return v.TakeAll();
  if (v.is_dict()) {
    for (const auto& [k, unused] : v.as_dict()) out.push_back(Value::String(k));
    return out;
  }
  if (v.is_string()) {
    for (std::string_view cp : CodePoints(v.as_string())) out.push_back(Value::String(std::string(cp)));
    return out;
  }
  throw Error("'" + std::string(v.TypeName()) + "' object is not iterable");
}

Value Evaluator::Call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) ThrowUndefined(callee);
  if (!callee.is_callable()) throw Error("'" + std::string(callee.TypeName()) + "' object is not callable");
  return callee.as_function()(*this, args);
}

Value Evaluator::ApplyFilter(const std::string& name, const Value& input, CallArgs& args, int line) {
  FilterFn f = FindFilter(name);
  if (!f) throw Error("unknown filter '" + name + "'", line);
  return f(*this, input, args);
}

bool Evaluator::ApplyTest(const std::string& name, const Value& input, CallArgs& args, int line) {
  TestFn t = FindTest(name);
  if (!t) throw Error("unknown test '" + name + "'", line);
  return t(*this, input, args);
}

Value Evaluator::Eval(const Expr& e) {
  RenderDepthGuard guard(*this);
  try {
    return EvalInner(e);
  } catch (Error& error) {
    if (error.line() == 0) error.set_line(e.line);
    throw;
  }
}

namespace {

// Python's printf-style `str % args` for %s, %r, %d, %i and %%.
std::string PercentFormat(const std::string& format, const Value& args) {
  const ValueList items = args.is_tuple() ? args.as_list() : ValueList{args};
  size_t next = 0;
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) throw Error("incomplete format");
    const char spec = format[i];
    if (spec == '%') {
      out += '%';
      continue;
    }
    if (next >= items.size()) throw Error("not enough arguments for format string");
    const Value& v = items[next++];
    if (spec == 's') {
      out += v.Str();
    } else if (spec == 'r') {
      out += v.Repr();
    } else if (spec == 'd' || spec == 'i') {
      if (!v.is_number()) throw Error("%d format: a real number is required, not " + std::string(v.TypeName()));
      out += std::to_string(v.is_float() ? static_cast<int64_t>(v.as_double()) : v.as_int());
    } else {
      throw Error(std::string("unsupported format character '") + spec + "'");
    }
  }
  if (next < items.size()) throw Error("not all arguments converted during string formatting");
  return out;
}

// markupsafe's escape() of a plain str (a Markup is already safe).
std::string HtmlEscaped(const Value& v) {
  if (v.is_markup()) return v.as_string();
  std::string out;
  for (char c : v.as_string()) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&#39;"; break;
      case '"': out += "&#34;"; break;
      default: out += c;
    }
  }
  return out;
}

Value Arithmetic(Evaluator& ev, const std::string& op, const Value& a, const Value& b) {
  if (a.is_undefined()) ThrowUndefined(a);
  if (b.is_undefined()) ThrowUndefined(b);
  if (op == "~") return ev.MakeString(a.Str() + b.Str());
  if (op == "+") {
    if (a.is_markup() || b.is_markup()) {
      if (a.is_string() && b.is_string()) return Value::Markup(ev.MakeString(HtmlEscaped(a) + HtmlEscaped(b)).as_string());
    } else if (a.is_string() && b.is_string()) {
      return ev.MakeString(a.as_string() + b.as_string());
    }
    if (a.is_list() && b.is_list() && a.is_tuple() == b.is_tuple()) {
      ValueList out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      ev.CountIterations(static_cast<int64_t>(b.as_list().size()));
      return Value::List(std::move(out), a.is_tuple());
    }
  }
  if (op == "*" && ((a.is_string() || a.is_list()) != (b.is_string() || b.is_list()))) {
    const Value& seq = a.is_string() || a.is_list() ? a : b;
    const Value& count = a.is_string() || a.is_list() ? b : a;
    if (count.is_int() || count.is_bool()) {
      const int64_t n = std::max<int64_t>(count.as_int(), 0);
      if (seq.is_string()) {
        if (n > 0 && seq.as_string().size() > ev.options().limits.max_output_bytes / static_cast<uint64_t>(n)) {
          ev.MakeString(std::string(ev.options().limits.max_output_bytes + 1, ' '));
        }
        std::string out;
        for (int64_t i = 0; i < n; ++i) out += seq.as_string();
        return seq.is_markup() ? Value::Markup(std::move(out)) : Value::String(std::move(out));
      }
      ev.CountIterations(n * static_cast<int64_t>(seq.as_list().size()));
      ValueList out;
      for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
      return Value::List(std::move(out), seq.is_tuple());
    }
  }
  if (op == "%" && a.is_string()) return ev.MakeString(PercentFormat(a.as_string(), b));
  if (!a.is_number() || !b.is_number()) {
    throw Error("unsupported operand type(s) for " + op + ": '" + std::string(a.TypeName()) + "' and '" +
                std::string(b.TypeName()) + "'");
  }
  const bool floats = a.is_float() || b.is_float();
  if (op == "/") {
    if (b.as_double() == 0) throw Error("division by zero");
    return Value::Float(a.as_double() / b.as_double());
  }
  if (floats) {
    const double x = a.as_double(), y = b.as_double();
    if (op == "+") return Value::Float(x + y);
    if (op == "-") return Value::Float(x - y);
    if (op == "*") return Value::Float(x * y);
    if (op == "**") return Value::Float(std::pow(x, y));
    if (y == 0) throw Error("float division by zero");
    if (op == "//") return Value::Float(std::floor(x / y));
    if (op == "%") {
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return Value::Float(r);
    }
  } else {
    const int64_t x = a.as_int(), y = b.as_int();
    if (op == "+") return Value::Int(CheckedInt(static_cast<long double>(x) + y, "+"));
    if (op == "-") return Value::Int(CheckedInt(static_cast<long double>(x) - y, "-"));
    if (op == "*") return Value::Int(CheckedInt(static_cast<long double>(x) * y, "*"));
    if (op == "**") {
      if (y < 0) return Value::Float(std::pow(static_cast<double>(x), static_cast<double>(y)));
      return Value::Int(CheckedInt(std::pow(static_cast<long double>(x), static_cast<long double>(y)), "**"));
    }
    if (y == 0) throw Error("integer division or modulo by zero");
    int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) {
      --q;
      r += y;
    }
    if (op == "//") return Value::Int(q);
    if (op == "%") return Value::Int(r);
  }
  throw Error("unsupported operator '" + op + "'");
}

bool Contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string()) {
      throw Error("'in <string>' requires string as left operand, not " + std::string(item.TypeName()));
    }
    return container.as_string().find(item.as_string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const Value& v : container.as_list()) {
      if (Equal(v, item)) return true;
    }
    return false;
  }
  if (container.is_dict()) return item.is_string() && container.Find(item.as_string()) != nullptr;
  if (container.is_iterator()) {  // consumes up to and including the match, as Python's `in`
    Value v;
    while (container.TakeNext(&v)) {
      if (Equal(v, item)) return true;
    }
    return false;
  }
  if (container.is_undefined()) return false;
  throw Error("argument of type '" + std::string(container.TypeName()) + "' is not iterable");
}

}  // namespace

Value Evaluator::EvalInner(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kLiteral: return e.value;
    case Expr::Kind::kName: return Lookup(e.name);
    case Expr::Kind::kList:
    case Expr::Kind::kTuple: {
      ValueList items;
      for (const ExprPtr& a : e.args) items.push_back(Eval(*a));
      return Value::List(std::move(items), e.kind == Expr::Kind::kTuple);
    }
    case Expr::Kind::kDict: {
      ValueDict items;
      Value dict = Value::Dict();
      for (const auto& [k, v] : e.entries) {
        Value key = Eval(*k);
        if (!key.is_string()) throw Error("dict keys must be strings here, got " + std::string(key.TypeName()));
        dict.Set(key.as_string(), Eval(*v));
      }
      return dict;
    }
    case Expr::Kind::kAttr: return GetAttr(Eval(*e.args[0]), e.name);
    case Expr::Kind::kIndex: return GetItem(Eval(*e.args[0]), Eval(*e.args[1]));
    case Expr::Kind::kSlice: {
      const Value target = Eval(*e.args[0]);
      Value parts[3];
      for (int i = 0; i < 3; ++i) {
        if (e.args[i + 1]) parts[i] = Eval(*e.args[i + 1]);
      }
      if (target.is_undefined()) ThrowUndefined(target);
      if (target.is_list()) {
        ValueList out;
        for (size_t i : SliceIndices(static_cast<int64_t>(target.as_list().size()), parts[0], parts[1], parts[2])) {
          out.push_back(target.as_list()[i]);
        }
        return Value::List(std::move(out), target.is_tuple());
      }
      if (target.is_string()) {
        const auto cps = CodePoints(target.as_string());
        std::string out;
        for (size_t i : SliceIndices(static_cast<int64_t>(cps.size()), parts[0], parts[1], parts[2])) out += cps[i];
        return Value::String(std::move(out));
      }
      throw Error("'" + std::string(target.TypeName()) + "' object is not subscriptable");
    }
    case Expr::Kind::kCall: {
      const Value callee = Eval(*e.args[0]);
      CallArgs args;
      for (size_t i = 1; i < e.args.size(); ++i) args.positional.push_back(Eval(*e.args[i]));
      for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, Eval(*v));
      return Call(callee, args);
    }
    case Expr::Kind::kFilter: {
      const Value input = Eval(*e.args[0]);
      CallArgs args;
      for (size_t i = 1; i < e.args.size(); ++i) args.positional.push_back(Eval(*e.args[i]));
      for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, Eval(*v));
      return ApplyFilter(e.name, input, args, e.line);
    }
    case Expr::Kind::kTest: {
      const Value input = Eval(*e.args[0]);
      CallArgs args;
      for (size_t i = 1; i < e.args.size(); ++i) args.positional.push_back(Eval(*e.args[i]));
      for (const auto& [k, v] : e.kwargs) args.keyword.emplace_back(k, Eval(*v));
      return Value::Bool(ApplyTest(e.name, input, args, e.line) != e.negated);
    }
    case Expr::Kind::kUnary: {
      const Value v = Eval(*e.args[0]);
      if (e.name == "not") return Value::Bool(!v.Truthy());
      if (v.is_undefined()) ThrowUndefined(v);
      if (!v.is_number()) throw Error("bad operand type for unary " + e.name + ": '" + std::string(v.TypeName()) + "'");
      if (e.name == "+") return v.is_float() ? v : Value::Int(v.as_int());
      if (v.is_float()) return Value::Float(-v.as_double());
      return Value::Int(CheckedInt(-static_cast<long double>(v.as_int()), "-"));
    }
    case Expr::Kind::kBinary: {
      const Value a = Eval(*e.args[0]);
      const Value b = Eval(*e.args[1]);
      const std::string& op = e.name;
      if (op == "==") return Value::Bool(Equal(a, b));
      if (op == "!=") return Value::Bool(!Equal(a, b));
      if (op == "in") return Value::Bool(Contains(b, a));
      if (op == "not in") return Value::Bool(!Contains(b, a));
      if (op == "<" || op == "<=" || op == ">" || op == ">=") {
        if (a.is_undefined()) ThrowUndefined(a);
        if (b.is_undefined()) ThrowUndefined(b);
        if (op == "<") return Value::Bool(Less(a, b));
        if (op == ">") return Value::Bool(Less(b, a));
        if (op == "<=") return Value::Bool(!Less(b, a));
        return Value::Bool(!Less(a, b));
      }
      return Arithmetic(*this, op, a, b);
    }
    case Expr::Kind::kAnd: {
      Value a = Eval(*e.args[0]);
      return a.Truthy() ? Eval(*e.args[1]) : a;
    }
    case Expr::Kind::kOr: {
      Value a = Eval(*e.args[0]);
      return a.Truthy() ? a : Eval(*e.args[1]);
    }
    case Expr::Kind::kCondition: {
      if (Eval(*e.args[0]).Truthy()) return Eval(*e.args[1]);
      if (e.args[2]) return Eval(*e.args[2]);
      return Value::Undefined("the inline if expression evaluated to false and no else section was defined");
    }
  }
  return Value();
}

}  // namespace infera::jinja
