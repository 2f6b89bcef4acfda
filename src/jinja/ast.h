// The syntax tree the parser builds and the evaluator walks: expressions and statements,
// each node with its template line for error messages. docs/jinja.md.
#ifndef INFERA_JINJA_AST_H_
#define INFERA_JINJA_AST_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/value.h"

namespace infera::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    kLiteral,   // value
    kName,      // name
    kList,      // args
    kTuple,     // args
    kDict,      // kwargs-like pairs in `entries`
    kAttr,      // args[0].name
    kIndex,     // args[0][args[1]]
    kSlice,     // args[0][args[1]:args[2]:args[3]] (null parts allowed)
    kCall,      // args[0](args[1..], kwargs)
    kFilter,    // args[0] | name(args[1..], kwargs); args[0] null in a filter block
    kTest,      // args[0] is [not] name(args[1..]) ; negated
    kUnary,     // name ("-", "+", "not") args[0]
    kBinary,    // args[0] name args[1]: + - * / // % ** ~ == != < <= > >= in "not in"
    kAnd,
    kOr,
    kCondition,  // args[1] if args[0] else args[2] (args[2] null: undefined)
  };
  Kind kind;
  int line = 0;
  Value value;
  std::string name;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::pair<ExprPtr, ExprPtr>> entries;  // dict literal
};

struct Node;
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: none
};

struct Node {
  enum class Kind {
    kText,        // text
    kOutput,      // {{ expr }}
    kIf,          // branches (condition, body); else_body
    kFor,         // targets in expr [if filter]: body else_body
    kSet,         // targets (or targets[0].attr) = expr
    kSetBlock,    // {% set targets[0] %}body{% endset %}
    kMacro,       // name(params): body
    kCallBlock,   // {% call(params) expr %}body{% endcall %}
    kFilterBlock, // {% filter expr %}body{% endfilter %}
    kBreak,
    kContinue,
    kScope,       // a body rendered as is ({% generation %})
  };
  Kind kind;
  int line = 0;
  std::string text;
  std::string attr;  // kSet on a namespace attribute: targets[0].attr
  ExprPtr expr;
  ExprPtr filter;    // kFor: the inline `if`
  std::vector<std::string> targets;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<MacroParam> params;
};

}  // namespace infera::jinja

#endif  // INFERA_JINJA_AST_H_
