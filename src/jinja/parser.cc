#include "jinja/parser.h"

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string_view>

namespace infera::jinja {
namespace {

using T = Token::Type;

class Parser {
 public:
  explicit Parser(const std::vector<Token>& tokens) : tokens_(tokens) {}

  Body Template() {
    Body body = Statements({});
    if (Peek().type != T::kEof) Fail("unexpected '" + std::string(Peek().text) + "'");
    return body;
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p(p) {
      if (++p->depth_ > kMaxNesting) p->Fail("template nests deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ~DepthGuard() { --p->depth_; }
    Parser* p;
  };

  const Token& Peek(size_t ahead = 0) const {
    const size_t i = pos_ + ahead;
    return i < tokens_.size() ? tokens_[i] : tokens_.back();
  }
  const Token& Next() {
    const Token& t = Peek();
    if (pos_ < tokens_.size() - 1) ++pos_;
    return t;
  }
  [[noreturn]] void Fail(const std::string& message) const { throw Error(message, Peek().line); }
  bool IsOp(std::string_view op, size_t ahead = 0) const {
    return Peek(ahead).type == T::kOperator && Peek(ahead).text == op;
  }
  bool IsName(std::string_view name, size_t ahead = 0) const {
    return Peek(ahead).type == T::kName && Peek(ahead).text == name;
  }
  void ExpectOp(std::string_view op) {
    if (!IsOp(op)) Fail("expected '" + std::string(op) + "', got " + Describe(Peek()));
    Next();
  }
  std::string ExpectName() {
    if (Peek().type != T::kName) Fail("expected a name, got " + Describe(Peek()));
    return Next().text;
  }
  void ExpectBlockEnd() {
    if (Peek().type != T::kBlockEnd) Fail("expected '%}', got " + Describe(Peek()));
    Next();
  }
  static std::string Describe(const Token& t) {
    switch (t.type) {
      case T::kEof: return "end of template";
      case T::kBlockEnd: return "'%}'";
      case T::kVarEnd: return "'}}'";
      case T::kData: return "text";
      case T::kString: return "a string";
      default: return "'" + t.text + "'";
    }
  }

  // Statements until a block tag whose keyword is in `ends` (left unconsumed, after its
  // '{%'), or the end of the template when `ends` is empty.
  Body Statements(const std::set<std::string_view>& ends) {
    DepthGuard guard(this);
    Body body;
    while (true) {
      const Token& t = Peek();
      if (t.type == T::kEof) {
        if (!ends.empty()) Fail("missing {% " + std::string(*ends.rbegin()) + " %} (unclosed block)");
        return body;
      }
      if (t.type == T::kData) {
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::kText;
        node->line = t.line;
        node->text = t.text;
        body.push_back(std::move(node));
        Next();
      } else if (t.type == T::kVarBegin) {
        Next();
        auto node = std::make_unique<Node>();
        node->kind = Node::Kind::kOutput;
        node->line = t.line;
        node->expr = Expression();
        if (Peek().type != T::kVarEnd) Fail("expected '}}', got " + Describe(Peek()));
        Next();
        body.push_back(std::move(node));
      } else if (t.type == T::kBlockBegin) {
        if (Peek(1).type == T::kName && ends.count(Peek(1).text)) {
          Next();
          return body;
        }
        Next();
        body.push_back(Statement());
      } else {
        Fail("unexpected " + Describe(t));
      }
    }
  }

  NodePtr Statement() {
    const int line = Peek().line;
    const std::string keyword = ExpectName();
    auto node = std::make_unique<Node>();
    node->line = line;
    if (keyword == "if") {
      node->kind = Node::Kind::kIf;
      ExprPtr condition = Expression();
      ExpectBlockEnd();
      while (true) {
        Body body = Statements({"elif", "else", "endif"});
        node->branches.emplace_back(std::move(condition), std::move(body));
        const std::string end = ExpectName();
        if (end == "elif") {
          condition = Expression();
          ExpectBlockEnd();
          continue;
        }
        ExpectBlockEnd();
        if (end == "else") {
          node->else_body = Statements({"endif"});
          Next();
          ExpectBlockEnd();
        }
        break;
      }
    } else if (keyword == "for") {
      node->kind = Node::Kind::kFor;
      node->targets.push_back(ExpectName());
      while (IsOp(",")) {
        Next();
        node->targets.push_back(ExpectName());
      }
      if (!IsName("in")) Fail("expected 'in' in a for loop, got " + Describe(Peek()));
      Next();
      node->expr = Or(/*allow_condition=*/false);
      if (IsName("if")) {
        Next();
        node->filter = Expression();
      }
      if (IsName("recursive")) Fail("recursive for loops are not supported");
      ExpectBlockEnd();
      node->body = Statements({"else", "endfor"});
      if (Next().text == "else") {
        ExpectBlockEnd();
        node->else_body = Statements({"endfor"});
        Next();
      }
      ExpectBlockEnd();
    } else if (keyword == "set") {
      node->targets.push_back(ExpectName());
      if (IsOp(".")) {
        Next();
        node->attr = ExpectName();
      }
      while (IsOp(",") && node->attr.empty()) {
        Next();
        node->targets.push_back(ExpectName());
      }
      if (IsOp("=")) {
        Next();
        node->kind = Node::Kind::kSet;
        node->expr = TupleOrExpression();
        ExpectBlockEnd();
      } else {
        if (node->targets.size() != 1 || !node->attr.empty()) Fail("a block set assigns one plain name");
        node->kind = Node::Kind::kSetBlock;
        if (IsOp("|")) Fail("filters on a block set are not supported");
        ExpectBlockEnd();
        node->body = Statements({"endset"});
        Next();
        ExpectBlockEnd();
      }
    } else if (keyword == "macro") {
      node->kind = Node::Kind::kMacro;
      node->text = ExpectName();
      node->params = Params();
      ExpectBlockEnd();
      node->body = Statements({"endmacro"});
      Next();
      if (Peek().type == T::kName) Next();  // {% endmacro name %}
      ExpectBlockEnd();
    } else if (keyword == "call") {
      node->kind = Node::Kind::kCallBlock;
      if (IsOp("(")) node->params = Params();
      node->expr = Expression();
      if (node->expr->kind != Expr::Kind::kCall) Fail("{% call %} needs a macro call");
      ExpectBlockEnd();
      node->body = Statements({"endcall"});
      Next();
      ExpectBlockEnd();
    } else if (keyword == "filter") {
      node->kind = Node::Kind::kFilterBlock;
      node->expr = FilterChain(nullptr);
      ExpectBlockEnd();
      node->body = Statements({"endfilter"});
      Next();
      ExpectBlockEnd();
    } else if (keyword == "break" || keyword == "continue") {
      node->kind = keyword == "break" ? Node::Kind::kBreak : Node::Kind::kContinue;
      ExpectBlockEnd();
    } else if (keyword == "generation") {
      // Hugging Face's AssistantTracker extension: marks assistant text; renders as is.
      node->kind = Node::Kind::kScope;
      ExpectBlockEnd();
      node->body = Statements({"endgeneration"});
      Next();
      ExpectBlockEnd();
    } else {
      throw Error("unsupported template construct '{% " + keyword + " %}'", line);
    }
    return node;
  }

  std::vector<MacroParam> Params() {
    std::vector<MacroParam> params;
    ExpectOp("(");
    while (!IsOp(")")) {
      MacroParam p;
      p.name = ExpectName();
      if (IsOp("=")) {
        Next();
        p.default_value = Expression();
      }
      params.push_back(std::move(p));
      if (!IsOp(",")) break;
      Next();
    }
    ExpectOp(")");
    return params;
  }

  ExprPtr Make(Expr::Kind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }

  // `a, b` without parentheses (set's right-hand side) is a tuple.
  ExprPtr TupleOrExpression() {
    const int line = Peek().line;
    ExprPtr first = Expression();
    if (!IsOp(",")) return first;
    ExprPtr tuple = Make(Expr::Kind::kTuple, line);
    tuple->args.push_back(std::move(first));
    while (IsOp(",")) {
      Next();
      if (Peek().type == T::kBlockEnd) break;
      tuple->args.push_back(Expression());
    }
    return tuple;
  }

  ExprPtr Expression() { return Or(true); }

  ExprPtr Or(bool allow_condition) {
    DepthGuard guard(this);
    ExprPtr left = And();
    while (IsName("or")) {
      ExprPtr e = Make(Expr::Kind::kOr, Next().line);
      e->args.push_back(std::move(left));
      e->args.push_back(And());
      left = std::move(e);
    }
    if (allow_condition && IsName("if")) {
      ExprPtr e = Make(Expr::Kind::kCondition, Next().line);
      e->args.push_back(Or(false));  // the condition
      e->args.push_back(std::move(left));
      if (IsName("else")) {
        Next();
        e->args.push_back(Or(true));
      } else {
        e->args.push_back(nullptr);
      }
      return e;
    }
    return left;
  }

  ExprPtr And() {
    ExprPtr left = Not();
    while (IsName("and")) {
      ExprPtr e = Make(Expr::Kind::kAnd, Next().line);
      e->args.push_back(std::move(left));
      e->args.push_back(Not());
      left = std::move(e);
    }
    return left;
  }

  ExprPtr Not() {
    if (IsName("not")) {
      DepthGuard guard(this);
      ExprPtr e = Make(Expr::Kind::kUnary, Next().line);
      e->name = "not";
      e->args.push_back(Not());
      return e;
    }
    return Compare();
  }

  ExprPtr Compare() {
    ExprPtr left = Math1();
    while (true) {
      std::string op;
      if (Peek().type == T::kOperator &&
          (Peek().text == "==" || Peek().text == "!=" || Peek().text == "<" || Peek().text == "<=" ||
           Peek().text == ">" || Peek().text == ">=")) {
        op = Peek().text;
        Next();
      } else if (IsName("in")) {
        op = "in";
        Next();
      } else if (IsName("not") && IsName("in", 1)) {
        op = "not in";
        Next();
        Next();
      } else {
        return left;
      }
      ExprPtr e = Make(Expr::Kind::kBinary, Peek().line);
      e->name = op;
      e->args.push_back(std::move(left));
      e->args.push_back(Math1());
      left = std::move(e);
    }
  }

  ExprPtr Binary(ExprPtr left, std::string op, ExprPtr right) {
    ExprPtr e = Make(Expr::Kind::kBinary, left->line);
    e->name = std::move(op);
    e->args.push_back(std::move(left));
    e->args.push_back(std::move(right));
    return e;
  }

  ExprPtr Math1() {
    ExprPtr left = Concat();
    while (IsOp("+") || IsOp("-")) {
      std::string op = Next().text;
      left = Binary(std::move(left), op, Concat());
    }
    return left;
  }

  ExprPtr Concat() {
    ExprPtr left = Math2();
    while (IsOp("~")) {
      Next();
      left = Binary(std::move(left), "~", Math2());
    }
    return left;
  }

  ExprPtr Math2() {
    ExprPtr left = Pow();
    while (IsOp("*") || IsOp("/") || IsOp("//") || IsOp("%")) {
      std::string op = Next().text;
      left = Binary(std::move(left), op, Pow());
    }
    return left;
  }

  ExprPtr Pow() {
    ExprPtr left = Unary(true);
    while (IsOp("**")) {
      Next();
      left = Binary(std::move(left), "**", Unary(true));
    }
    return left;
  }

  ExprPtr Unary(bool with_filter) {
    DepthGuard guard(this);
    ExprPtr node;
    if (IsOp("-") || IsOp("+")) {
      node = Make(Expr::Kind::kUnary, Peek().line);
      node->name = Next().text;
      node->args.push_back(Unary(false));
    } else {
      node = Postfix(Primary());
    }
    return with_filter ? FilterChain(std::move(node)) : std::move(node);
  }

  ExprPtr Primary() {
    const Token& t = Peek();
    switch (t.type) {
      case T::kName: {
        Next();
        ExprPtr e = Make(Expr::Kind::kLiteral, t.line);
        if (t.text == "true" || t.text == "True") {
          e->value = Value::Bool(true);
        } else if (t.text == "false" || t.text == "False") {
          e->value = Value::Bool(false);
        } else if (t.text == "none" || t.text == "None") {
          e->value = Value::None();
        } else {
          e->kind = Expr::Kind::kName;
          e->name = t.text;
        }
        return e;
      }
      case T::kString: {
        std::string s;
        const int line = t.line;
        while (Peek().type == T::kString) s += Next().text;  // adjacent literals concatenate
        ExprPtr e = Make(Expr::Kind::kLiteral, line);
        e->value = Value::String(std::move(s));
        return e;
      }
      case T::kInt: {
        Next();
        ExprPtr e = Make(Expr::Kind::kLiteral, t.line);
        errno = 0;
        const long long v = std::strtoll(t.text.c_str(), nullptr, 10);
        if (errno == ERANGE) Fail("integer literal out of range: " + t.text);
        e->value = Value::Int(v);
        return e;
      }
      case T::kFloat: {
        Next();
        ExprPtr e = Make(Expr::Kind::kLiteral, t.line);
        e->value = Value::Float(std::strtod(t.text.c_str(), nullptr));
        return e;
      }
      case T::kOperator: {
        if (t.text == "(") {
          Next();
          if (IsOp(")")) {
            Next();
            return Make(Expr::Kind::kTuple, t.line);
          }
          ExprPtr first = Expression();
          if (IsOp(")")) {
            Next();
            return first;
          }
          ExprPtr tuple = Make(Expr::Kind::kTuple, t.line);
          tuple->args.push_back(std::move(first));
          while (IsOp(",")) {
            Next();
            if (IsOp(")")) break;
            tuple->args.push_back(Expression());
          }
          ExpectOp(")");
          return tuple;
        }
        if (t.text == "[") {
          Next();
          ExprPtr list = Make(Expr::Kind::kList, t.line);
          while (!IsOp("]")) {
            list->args.push_back(Expression());
            if (!IsOp(",")) break;
            Next();
          }
          ExpectOp("]");
          return list;
        }
        if (t.text == "{") {
          Next();
          ExprPtr dict = Make(Expr::Kind::kDict, t.line);
          while (!IsOp("}")) {
            ExprPtr key = Expression();
            ExpectOp(":");
            dict->entries.emplace_back(std::move(key), Expression());
            if (!IsOp(",")) break;
            Next();
          }
          ExpectOp("}");
          return dict;
        }
        break;
      }
      default: break;
    }
    Fail("unexpected " + Describe(t) + " in an expression");
  }

  ExprPtr Postfix(ExprPtr node) {
    while (true) {
      DepthGuard guard(this);
      if (IsOp(".")) {
        const int line = Next().line;
        ExprPtr e = Make(Expr::Kind::kAttr, line);
        if (Peek().type == T::kInt) {
          e->kind = Expr::Kind::kIndex;
          ExprPtr index = Make(Expr::Kind::kLiteral, line);
          index->value = Value::Int(std::strtoll(Next().text.c_str(), nullptr, 10));
          e->args.push_back(std::move(node));
          e->args.push_back(std::move(index));
        } else {
          e->name = ExpectName();
          e->args.push_back(std::move(node));
        }
        node = std::move(e);
      } else if (IsOp("[")) {
        node = Subscript(std::move(node));
      } else if (IsOp("(")) {
        node = Call(std::move(node));
      } else {
        return node;
      }
    }
  }

  ExprPtr Subscript(ExprPtr target) {
    const int line = Next().line;
    ExprPtr parts[3];
    int part = 0;
    bool slice = false;
    while (!IsOp("]")) {
      if (IsOp(":")) {
        Next();
        slice = true;
        if (++part > 2) Fail("a slice has at most three parts");
        continue;
      }
      if (parts[part]) Fail("expected ']' or ':' in a subscript");
      parts[part] = Expression();
    }
    Next();
    ExprPtr e = Make(slice ? Expr::Kind::kSlice : Expr::Kind::kIndex, line);
    e->args.push_back(std::move(target));
    if (!slice) {
      if (!parts[0]) Fail("empty subscript");
      e->args.push_back(std::move(parts[0]));
    } else {
      for (ExprPtr& p : parts) e->args.push_back(std::move(p));
    }
    return e;
  }

  // Arguments in parentheses into e->args (after what is there) and e->kwargs.
  void Arguments(Expr* e) {
    ExpectOp("(");
    while (!IsOp(")")) {
      if (IsOp("*") || IsOp("**")) Fail("*args and **kwargs in calls are not supported");
      if (Peek().type == T::kName && IsOp("=", 1)) {
        std::string name = Next().text;
        Next();
        e->kwargs.emplace_back(std::move(name), Expression());
      } else {
        if (!e->kwargs.empty()) Fail("positional argument after a keyword argument");
        e->args.push_back(Expression());
      }
      if (!IsOp(",")) break;
      Next();
    }
    ExpectOp(")");
  }

  ExprPtr Call(ExprPtr callee) {
    ExprPtr e = Make(Expr::Kind::kCall, Peek().line);
    e->args.push_back(std::move(callee));
    Arguments(e.get());
    return e;
  }

  // `| name(args)` and `is [not] test args` after `node` (null: a filter block's chain).
  ExprPtr FilterChain(ExprPtr node) {
    bool first = node == nullptr;
    while (true) {
      DepthGuard guard(this);
      if (IsOp("|") || first) {
        if (!first) Next();
        first = false;
        ExprPtr e = Make(Expr::Kind::kFilter, Peek().line);
        e->name = ExpectName();
        while (IsOp(".")) {  // dotted filter names
          Next();
          e->name += "." + ExpectName();
        }
        e->args.push_back(std::move(node));
        if (IsOp("(")) Arguments(e.get());
        node = std::move(e);
      } else if (IsName("is")) {
        ExprPtr e = Make(Expr::Kind::kTest, Next().line);
        if (IsName("not")) {
          Next();
          e->negated = true;
        }
        e->name = ExpectName();
        e->args.push_back(std::move(node));
        if (IsOp("(")) {
          Arguments(e.get());
        } else if ((Peek().type == T::kName && !IsName("else") && !IsName("or") && !IsName("and") &&
                    !IsName("if") && !IsName("in") && !IsName("not") && !IsName("is")) ||
                   Peek().type == T::kString || Peek().type == T::kInt || Peek().type == T::kFloat ||
                   IsOp("[") || IsOp("{")) {
          e->args.push_back(Postfix(Primary()));
        }
        node = std::move(e);
      } else if (IsOp("(") && node) {
        node = Call(std::move(node));
      } else {
        return node;
      }
    }
  }

  const std::vector<Token>& tokens_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

Body Parse(const std::vector<Token>& tokens) { return Parser(tokens).Template(); }

}  // namespace infera::jinja
