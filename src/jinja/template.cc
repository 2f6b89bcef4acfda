#include "jinja/template.h"

#include "absl/status/status.h"
#include "jinja/builtins.h"
#include "jinja/lexer.h"
#include "jinja/parser.h"

namespace infera::jinja {
namespace {

absl::Status ToStatus(const Error& e) {
  std::string message = e.line() > 0 ? "line " + std::to_string(e.line()) + ": " + e.what() : e.what();
  return absl::InvalidArgumentError(message);
}

// Unknown filter and test names are parse errors, not render-time surprises.
void CheckNames(const Expr* e) {
  if (!e) return;
  if (e->kind == Expr::Kind::kFilter && !FindFilter(e->name)) {
    throw Error("unsupported filter '" + e->name + "'", e->line);
  }
  if (e->kind == Expr::Kind::kTest && !FindTest(e->name)) throw Error("unsupported test '" + e->name + "'", e->line);
  for (const ExprPtr& a : e->args) CheckNames(a.get());
  for (const auto& [k, v] : e->kwargs) CheckNames(v.get());
  for (const auto& [k, v] : e->entries) {
    CheckNames(k.get());
    CheckNames(v.get());
  }
}

void CheckNames(const Body& body) {
  for (const NodePtr& n : body) {
    CheckNames(n->expr.get());
    CheckNames(n->filter.get());
    for (const auto& [condition, branch] : n->branches) {
      CheckNames(condition.get());
      CheckNames(branch);
    }
    for (const MacroParam& p : n->params) CheckNames(p.default_value.get());
    CheckNames(n->body);
    CheckNames(n->else_body);
  }
}

bool ExprReferences(const Expr* e, std::string_view name) {
  if (!e) return false;
  if (e->kind == Expr::Kind::kName && e->name == name) return true;
  for (const ExprPtr& a : e->args) {
    if (ExprReferences(a.get(), name)) return true;
  }
  for (const auto& [k, v] : e->kwargs) {
    if (ExprReferences(v.get(), name)) return true;
  }
  for (const auto& [k, v] : e->entries) {
    if (ExprReferences(k.get(), name) || ExprReferences(v.get(), name)) return true;
  }
  return false;
}

bool BodyReferences(const Body& body, std::string_view name) {
  for (const NodePtr& n : body) {
    if (ExprReferences(n->expr.get(), name) || ExprReferences(n->filter.get(), name)) return true;
    for (const auto& [condition, branch] : n->branches) {
      if (ExprReferences(condition.get(), name) || BodyReferences(branch, name)) return true;
    }
    for (const MacroParam& p : n->params) {
      if (ExprReferences(p.default_value.get(), name)) return true;
    }
    if (BodyReferences(n->body, name) || BodyReferences(n->else_body, name)) return true;
  }
  return false;
}

}  // namespace

bool Template::References(std::string_view name) const { return body_ && BodyReferences(*body_, name); }

absl::StatusOr<Template> Template::Parse(std::string_view source) {
  try {
    auto body = std::make_shared<Body>(jinja::Parse(Tokenize(source)));
    CheckNames(*body);
    Template t;
    t.body_ = std::move(body);
    return t;
  } catch (const Error& e) {
    return ToStatus(e);
  }
}

absl::StatusOr<std::string> Template::Render(const ValueDict& context, const RenderOptions& options) const {
  try {
    Evaluator evaluator(context, options);
    return evaluator.Render(*body_);
  } catch (const Error& e) {
    return ToStatus(e);
  }
}

}  // namespace infera::jinja
