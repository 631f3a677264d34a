#include "selector/parser.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <span>
#include <utility>

#include "selector/lexer.hpp"
#include "selector/selector.hpp"

namespace carrier::selector {

namespace {

constexpr std::array<std::pair<std::string_view, Header>, 8> kHeaders{{
    {"JMSPriority", Header::priority},
    {"JMSTimestamp", Header::timestamp},
    {"JMSExpiration", Header::expiration},
    {"JMSDeliveryMode", Header::delivery_mode},
    {"JMSCorrelationID", Header::correlation_id},
    {"JMSType", Header::type},
    {"JMSMessageID", Header::message_id},
    {"JMSReplyTo", Header::reply_to},
}};

// What an operand is known to be before any message is seen. A property can be anything.
enum class Type : std::uint8_t { boolean, numeric, string, any };

Type header_type(Header header) {
  switch (header) {
    case Header::priority:
    case Header::timestamp:
    case Header::expiration:
      return Type::numeric;
    case Header::delivery_mode:
    case Header::correlation_id:
    case Header::type:
    case Header::message_id:
    case Header::reply_to:
      return Type::string;
  }
  return Type::any;
}

struct Operand {
  std::uint32_t node = 0;
  Type type = Type::any;
  std::size_t pos = 0;  // where the operand's text starts, for type errors
  std::size_t depth = 1;
};

Op comparison_op(TokenKind kind) {
  switch (kind) {
    case TokenKind::equal: return Op::equal;
    case TokenKind::not_equal: return Op::not_equal;
    case TokenKind::less: return Op::less;
    case TokenKind::less_equal: return Op::less_equal;
    case TokenKind::greater: return Op::greater;
    default: return Op::greater_equal;
  }
}

bool is_comparison(TokenKind kind) {
  return kind == TokenKind::equal || kind == TokenKind::not_equal || kind == TokenKind::less ||
         kind == TokenKind::less_equal || kind == TokenKind::greater ||
         kind == TokenKind::greater_equal;
}

Result<LikePattern> compile_like(const Token& pattern, const Token* escape) {
  std::string_view esc;
  if (escape != nullptr) {
    esc = escape->value;
    if (esc.empty() || utf8_char_length(esc, 0) != esc.size()) {
      return selector_error(Errc::invalid_argument, "ESCAPE needs exactly one character",
                            escape->pos);
    }
  }
  const std::string_view text = pattern.value;
  std::vector<LikeUnit> units;
  std::size_t run = 0;  // start of the current run of plain characters
  const auto end_run = [&](std::size_t at) {
    if (at > run) units.push_back({LikeUnit::Kind::literal, text.substr(run, at - run)});
  };
  std::size_t i = 0;
  while (i < text.size()) {
    if (!esc.empty() && text.substr(i, esc.size()) == esc) {
      end_run(i);
      i += esc.size();
      if (i == text.size()) {
        return selector_error(Errc::invalid_argument, "LIKE pattern ends with its escape character",
                              pattern.pos);
      }
      const std::size_t length = utf8_char_length(text, i);
      units.push_back({LikeUnit::Kind::literal, text.substr(i, length)});
      i += length;
      run = i;
      continue;
    }
    const char c = text[i];
    if (c == '%' || c == '_') {
      end_run(i);
      units.push_back({c == '%' ? LikeUnit::Kind::any : LikeUnit::Kind::one, {}});
      run = i + 1;
    }
    ++i;
  }
  end_run(text.size());
  LikePattern out = build_like(units);
  for (const auto& segment : out.segments) {
    if (segment.chars.size() > kMaxLikeSegmentChars) {
      return selector_error(Errc::limit_exceeded,
                            fmt::format("LIKE pattern has more than {} characters between two '%'",
                                        kMaxLikeSegmentChars),
                            pattern.pos);
    }
  }
  out.source = pattern.value;
  if (escape != nullptr) out.escape = escape->value;
  return out;
}

// Recursive descent, one function per precedence level (lowest first): OR, AND, NOT,
// predicates (comparison, BETWEEN, IN, LIKE, IS NULL), + -, * /, unary + -, primaries.
// Errors set error_ and unwind as nullopt.
class Parser {
 public:
  Parser(std::vector<Token> tokens, const Limits& limits)
      : tokens_(std::move(tokens)), limits_(limits) {}

  Result<Tree> run() {
    auto root = parse_or();
    if (root && peek().kind != TokenKind::end) {
      fail(Errc::invalid_argument, fmt::format("unexpected {}", describe(peek())), peek().pos);
      root.reset();
    }
    if (root && !require(*root, Type::boolean)) root.reset();
    if (!root) return unexpected(std::move(*error_));
    tree_.root = root->node;
    return std::move(tree_);
  }

 private:
  // Counts parentheses and unary operators: the parser's own recursion depth.
  class Nesting {
   public:
    Nesting(Parser& parser, std::size_t pos) : parser_(parser) {
      ok_ = ++parser_.nesting_ <= parser_.limits_.max_depth;
      if (!ok_) parser_.fail_depth(pos);
    }
    ~Nesting() { --parser_.nesting_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    bool ok() const { return ok_; }

   private:
    Parser& parser_;
    bool ok_ = true;
  };

  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(next_ + ahead, tokens_.size() - 1)];
  }
  const Token& take() {
    const Token& token = tokens_[next_];
    if (next_ + 1 < tokens_.size()) ++next_;
    return token;
  }
  bool accept(TokenKind kind) {
    if (peek().kind != kind) return false;
    take();
    return true;
  }

  void fail(Errc code, std::string_view what, std::size_t pos) {
    if (!error_) error_ = selector_error(code, what, pos).error;
  }
  void fail_depth(std::size_t pos) {
    fail(Errc::limit_exceeded, fmt::format("nesting deeper than {}", limits_.max_depth), pos);
  }
  bool expect(TokenKind kind, std::string_view what) {
    if (accept(kind)) return true;
    fail(Errc::invalid_argument, fmt::format("expected {}", what), peek().pos);
    return false;
  }

  bool require(const Operand& operand, Type wanted) {
    if (operand.type == Type::any || operand.type == wanted) return true;
    const char* what = wanted == Type::boolean   ? "expected a boolean expression"
                       : wanted == Type::numeric ? "expected a numeric expression"
                                                 : "expected a string expression";
    fail(Errc::invalid_argument, what, operand.pos);
    return false;
  }

  std::optional<Operand> add(Node node, std::span<const Operand> children, Type type,
                             std::size_t pos, std::size_t op_pos) {
    std::size_t depth = 0;
    for (const auto& child : children) depth = std::max(depth, child.depth);
    ++depth;
    if (depth > limits_.max_depth) {
      fail_depth(op_pos);
      return std::nullopt;
    }
    node.first_child = static_cast<std::uint32_t>(tree_.child_ids.size());
    node.child_count = static_cast<std::uint32_t>(children.size());
    for (const auto& child : children) tree_.child_ids.push_back(child.node);
    tree_.nodes.push_back(std::move(node));
    return Operand{static_cast<std::uint32_t>(tree_.nodes.size() - 1), type, pos, depth};
  }
  std::optional<Operand> leaf(Node node, Type type, std::size_t pos) {
    return add(std::move(node), {}, type, pos, pos);
  }
  std::uint32_t add_string(std::string text) {
    tree_.strings.push_back(std::move(text));
    return static_cast<std::uint32_t>(tree_.strings.size() - 1);
  }

  // AND and OR: operands of one chain become children of one node.
  std::optional<Operand> parse_chain(TokenKind keyword, Op op, bool is_or) {
    std::vector<Operand> operands;
    std::size_t op_pos = peek().pos;
    auto first = is_or ? parse_chain(TokenKind::kw_and, Op::logical_and, false) : parse_not();
    if (!first) return std::nullopt;
    operands.push_back(*first);
    while (peek().kind == keyword) {
      op_pos = take().pos;
      auto next = is_or ? parse_chain(TokenKind::kw_and, Op::logical_and, false) : parse_not();
      if (!next) return std::nullopt;
      operands.push_back(*next);
    }
    if (operands.size() == 1) return operands.front();
    for (const auto& operand : operands) {
      if (!require(operand, Type::boolean)) return std::nullopt;
    }
    Node node;
    node.op = op;
    return add(std::move(node), operands, Type::boolean, operands.front().pos, op_pos);
  }

  std::optional<Operand> parse_or() { return parse_chain(TokenKind::kw_or, Op::logical_or, true); }

  std::optional<Operand> parse_not() {
    if (peek().kind != TokenKind::kw_not) return parse_predicate();
    const std::size_t pos = take().pos;
    Nesting nesting(*this, pos);
    if (!nesting.ok()) return std::nullopt;
    auto operand = parse_not();
    if (!operand || !require(*operand, Type::boolean)) return std::nullopt;
    Node node;
    node.op = Op::logical_not;
    const Operand children[] = {*operand};
    return add(std::move(node), children, Type::boolean, pos, pos);
  }

  std::optional<Operand> parse_predicate() {
    auto left = parse_additive();
    if (!left) return std::nullopt;
    const Token& token = peek();
    if (is_comparison(token.kind)) {
      const std::size_t op_pos = take().pos;
      const Op op = comparison_op(token.kind);
      auto right = parse_additive();
      if (!right) return std::nullopt;
      // Strings and booleans compare only with = and <> (JMS 3.8.1.2).
      if (op != Op::equal && op != Op::not_equal &&
          (!require(*left, Type::numeric) || !require(*right, Type::numeric))) {
        return std::nullopt;
      }
      Node node;
      node.op = op;
      const Operand children[] = {*left, *right};
      return add(std::move(node), children, Type::boolean, left->pos, op_pos);
    }
    bool negated = false;
    if (token.kind == TokenKind::kw_not) {
      const TokenKind after = peek(1).kind;
      if (after != TokenKind::kw_between && after != TokenKind::kw_in &&
          after != TokenKind::kw_like) {
        fail(Errc::invalid_argument, "expected BETWEEN, IN or LIKE after NOT", peek(1).pos);
        return std::nullopt;
      }
      take();
      negated = true;
    }
    switch (peek().kind) {
      case TokenKind::kw_between: return parse_between(*left, negated);
      case TokenKind::kw_in: return parse_in(*left, negated);
      case TokenKind::kw_like: return parse_like(*left, negated);
      case TokenKind::kw_is: return parse_is_null(*left);
      default: return left;
    }
  }

  std::optional<Operand> parse_between(const Operand& value, bool negated) {
    const std::size_t op_pos = take().pos;
    auto low = parse_additive();
    if (!low || !expect(TokenKind::kw_and, "AND")) return std::nullopt;
    auto high = parse_additive();
    if (!high) return std::nullopt;
    if (!require(value, Type::numeric) || !require(*low, Type::numeric) ||
        !require(*high, Type::numeric)) {
      return std::nullopt;
    }
    Node node;
    node.op = negated ? Op::not_between : Op::between;
    const Operand children[] = {value, *low, *high};
    return add(std::move(node), children, Type::boolean, value.pos, op_pos);
  }

  std::optional<Operand> parse_in(const Operand& value, bool negated) {
    const std::size_t op_pos = take().pos;
    if (!require(value, Type::string) || !expect(TokenKind::left_paren, "'('")) return std::nullopt;
    std::vector<std::string> set;
    do {
      if (peek().kind != TokenKind::string) {
        fail(Errc::invalid_argument, "expected a string literal", peek().pos);
        return std::nullopt;
      }
      set.push_back(take().value);
    } while (accept(TokenKind::comma));
    if (!expect(TokenKind::right_paren, "')'")) return std::nullopt;
    std::sort(set.begin(), set.end());
    set.erase(std::unique(set.begin(), set.end()), set.end());
    tree_.sets.push_back(std::move(set));
    Node node;
    node.op = negated ? Op::not_in : Op::in;
    node.index = static_cast<std::uint32_t>(tree_.sets.size() - 1);
    const Operand children[] = {value};
    return add(std::move(node), children, Type::boolean, value.pos, op_pos);
  }

  std::optional<Operand> parse_like(const Operand& value, bool negated) {
    const std::size_t op_pos = take().pos;
    if (!require(value, Type::string)) return std::nullopt;
    if (peek().kind != TokenKind::string) {
      fail(Errc::invalid_argument, "expected a string literal", peek().pos);
      return std::nullopt;
    }
    const Token& pattern = take();
    const Token* escape = nullptr;
    if (accept(TokenKind::kw_escape)) {
      if (peek().kind != TokenKind::string) {
        fail(Errc::invalid_argument, "expected a string literal", peek().pos);
        return std::nullopt;
      }
      escape = &take();
    }
    auto compiled = compile_like(pattern, escape);
    if (!compiled) {
      if (!error_) error_ = std::move(compiled).error();
      return std::nullopt;
    }
    tree_.patterns.push_back(std::move(*compiled));
    Node node;
    node.op = negated ? Op::not_like : Op::like;
    node.index = static_cast<std::uint32_t>(tree_.patterns.size() - 1);
    const Operand children[] = {value};
    return add(std::move(node), children, Type::boolean, value.pos, op_pos);
  }

  std::optional<Operand> parse_is_null(const Operand& value) {
    const std::size_t op_pos = take().pos;
    const bool negated = accept(TokenKind::kw_not);
    if (!expect(TokenKind::kw_null, "NULL")) return std::nullopt;
    Node node;
    node.op = negated ? Op::is_not_null : Op::is_null;
    const Operand children[] = {value};
    return add(std::move(node), children, Type::boolean, value.pos, op_pos);
  }

  std::optional<Operand> parse_binary_level(bool additive) {
    auto left = additive ? parse_binary_level(false) : parse_unary();
    if (!left) return std::nullopt;
    while (true) {
      const TokenKind kind = peek().kind;
      Op op;
      if (additive && kind == TokenKind::plus) {
        op = Op::add;
      } else if (additive && kind == TokenKind::minus) {
        op = Op::subtract;
      } else if (!additive && kind == TokenKind::star) {
        op = Op::multiply;
      } else if (!additive && kind == TokenKind::slash) {
        op = Op::divide;
      } else {
        return left;
      }
      const std::size_t op_pos = take().pos;
      auto right = additive ? parse_binary_level(false) : parse_unary();
      if (!right || !require(*left, Type::numeric) || !require(*right, Type::numeric)) {
        return std::nullopt;
      }
      Node node;
      node.op = op;
      const Operand children[] = {*left, *right};
      left = add(std::move(node), children, Type::numeric, left->pos, op_pos);
      if (!left) return std::nullopt;
    }
  }

  std::optional<Operand> parse_additive() { return parse_binary_level(true); }

  std::optional<Operand> parse_unary() {
    const TokenKind kind = peek().kind;
    if (kind != TokenKind::minus && kind != TokenKind::plus) return parse_primary();
    const std::size_t pos = take().pos;
    Nesting nesting(*this, pos);
    if (!nesting.ok()) return std::nullopt;
    // -9223372036854775808: the one integer literal that exists only negated.
    if (kind == TokenKind::minus && peek().kind == TokenKind::integer &&
        peek().integer == kMinLongMagnitude) {
      take();
      Node node;
      node.op = Op::integer;
      node.integer = std::numeric_limits<std::int64_t>::min();
      return leaf(std::move(node), Type::numeric, pos);
    }
    auto operand = parse_unary();
    if (!operand || !require(*operand, Type::numeric)) return std::nullopt;
    operand->pos = pos;
    if (kind == TokenKind::plus) return operand;
    // Fold a negated literal: it was the last node made and nothing else refers to it.
    Node& last = tree_.nodes[operand->node];
    if (last.op == Op::integer) {
      // Wrapping, as Java's long does: -(-2^63) is -2^63.
      last.integer = static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(last.integer));
      return operand;
    }
    if (last.op == Op::real) {
      last.real = -last.real;
      return operand;
    }
    Node node;
    node.op = Op::negate;
    const Operand children[] = {*operand};
    return add(std::move(node), children, Type::numeric, pos, pos);
  }

  std::optional<Operand> parse_primary() {
    const Token& token = peek();
    Node node;
    switch (token.kind) {
      case TokenKind::left_paren: {
        take();
        Nesting nesting(*this, token.pos);
        if (!nesting.ok()) return std::nullopt;
        auto inner = parse_or();
        if (!inner || !expect(TokenKind::right_paren, "')'")) return std::nullopt;
        inner->pos = token.pos;
        return inner;
      }
      case TokenKind::identifier: {
        take();
        if (auto header = header_named(token.text)) {
          node.op = Op::header;
          node.header = *header;
          return leaf(std::move(node), header_type(*header), token.pos);
        }
        node.op = Op::property;
        node.index = add_string(std::string(token.text));
        return leaf(std::move(node), Type::any, token.pos);
      }
      case TokenKind::string:
        take();
        node.op = Op::string;
        node.index = add_string(token.value);
        return leaf(std::move(node), Type::string, token.pos);
      case TokenKind::integer:
        if (token.integer == kMinLongMagnitude) {
          fail(Errc::invalid_argument, "integer literal out of range", token.pos);
          return std::nullopt;
        }
        take();
        node.op = Op::integer;
        node.integer = static_cast<std::int64_t>(token.integer);
        return leaf(std::move(node), Type::numeric, token.pos);
      case TokenKind::real:
        take();
        node.op = Op::real;
        node.real = token.real;
        return leaf(std::move(node), Type::numeric, token.pos);
      case TokenKind::kw_true:
      case TokenKind::kw_false:
        take();
        node.op = Op::boolean;
        node.boolean = token.kind == TokenKind::kw_true;
        return leaf(std::move(node), Type::boolean, token.pos);
      case TokenKind::end:
        fail(Errc::invalid_argument, "unexpected end of input", token.pos);
        return std::nullopt;
      default:
        fail(Errc::invalid_argument,
             fmt::format("expected an expression, found {}", describe(token)), token.pos);
        return std::nullopt;
    }
  }

  std::vector<Token> tokens_;
  std::size_t next_ = 0;
  Limits limits_;
  std::size_t nesting_ = 0;
  Tree tree_;
  std::optional<Error> error_;
};

// --- to_text ---------------------------------------------------------------------------------

void append_quoted(std::string& out, std::string_view text) {
  out.push_back('\'');
  for (const char c : text) {
    if (c == '\'') out.push_back('\'');
    out.push_back(c);
  }
  out.push_back('\'');
}

std::string_view op_text(Op op) {
  switch (op) {
    case Op::add: return " + ";
    case Op::subtract: return " - ";
    case Op::multiply: return " * ";
    case Op::divide: return " / ";
    case Op::equal: return " = ";
    case Op::not_equal: return " <> ";
    case Op::less: return " < ";
    case Op::less_equal: return " <= ";
    case Op::greater: return " > ";
    case Op::greater_equal: return " >= ";
    case Op::logical_and: return " AND ";
    case Op::logical_or: return " OR ";
    default: return " ? ";
  }
}

bool is_leaf(Op op) {
  return op == Op::boolean || op == Op::integer || op == Op::real || op == Op::string ||
         op == Op::header || op == Op::property;
}

void append_node(const Tree& tree, const Node& node, std::string& out);

void append_operand(const Tree& tree, const Node& node, std::string& out) {
  if (is_leaf(node.op)) {
    append_node(tree, node, out);
    return;
  }
  out.push_back('(');
  append_node(tree, node, out);
  out.push_back(')');
}

void append_node(const Tree& tree, const Node& node, std::string& out) {
  switch (node.op) {
    case Op::boolean:
      out += node.boolean ? "TRUE" : "FALSE";
      return;
    case Op::integer:
      out += std::to_string(node.integer);
      return;
    case Op::real: {
      std::array<char, 64> buffer{};
      const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), node.real);
      const std::string_view text(buffer.data(), ec == std::errc() ? end - buffer.data() : 0);
      out += text;
      // Keep it approximate when read back: "1500" would be an exact numeric.
      if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
      return;
    }
    case Op::string:
      append_quoted(out, tree.strings[node.index]);
      return;
    case Op::header:
      out += header_name(node.header);
      return;
    case Op::property:
      out += tree.strings[node.index];
      return;
    case Op::negate:
      out += "-";
      append_operand(tree, tree.child(node, 0), out);
      return;
    case Op::logical_not:
      out += "NOT ";
      append_operand(tree, tree.child(node, 0), out);
      return;
    case Op::between:
    case Op::not_between:
      append_operand(tree, tree.child(node, 0), out);
      out += node.op == Op::between ? " BETWEEN " : " NOT BETWEEN ";
      append_operand(tree, tree.child(node, 1), out);
      out += " AND ";
      append_operand(tree, tree.child(node, 2), out);
      return;
    case Op::in:
    case Op::not_in: {
      append_operand(tree, tree.child(node, 0), out);
      out += node.op == Op::in ? " IN (" : " NOT IN (";
      const auto& set = tree.sets[node.index];
      for (std::size_t i = 0; i < set.size(); ++i) {
        if (i > 0) out += ", ";
        append_quoted(out, set[i]);
      }
      out += ")";
      return;
    }
    case Op::like:
    case Op::not_like: {
      append_operand(tree, tree.child(node, 0), out);
      out += node.op == Op::like ? " LIKE " : " NOT LIKE ";
      const auto& pattern = tree.patterns[node.index];
      append_quoted(out, pattern.source);
      if (pattern.escape) {
        out += " ESCAPE ";
        append_quoted(out, *pattern.escape);
      }
      return;
    }
    case Op::is_null:
    case Op::is_not_null:
      append_operand(tree, tree.child(node, 0), out);
      out += node.op == Op::is_null ? " IS NULL" : " IS NOT NULL";
      return;
    default:  // binary and n-ary
      for (std::uint32_t k = 0; k < node.child_count; ++k) {
        if (k > 0) out += op_text(node.op);
        append_operand(tree, tree.child(node, k), out);
      }
      return;
  }
}

}  // namespace

std::optional<Header> header_named(std::string_view identifier) {
  if (!identifier.starts_with("JMS")) return std::nullopt;
  for (const auto& [name, header] : kHeaders) {
    if (identifier == name) return header;
  }
  return std::nullopt;
}

std::string_view header_name(Header header) {
  for (const auto& [name, h] : kHeaders) {
    if (h == header) return name;
  }
  return "JMS?";
}

Result<Tree> parse_tree(std::string_view text, const Limits& limits) {
  if (text.size() > limits.max_length) {
    return selector_error(Errc::limit_exceeded,
                          fmt::format("selector longer than {} bytes", limits.max_length),
                          limits.max_length);
  }
  auto tokens = tokenize(text);
  if (!tokens) return unexpected(std::move(tokens).error());
  return Parser(std::move(*tokens), limits).run();
}

std::string to_text(const Tree& tree) {
  std::string out;
  if (!tree.nodes.empty()) append_node(tree, tree.nodes[tree.root], out);
  return out;
}

// --- the facade's parse ----------------------------------------------------------------------

Selector::Selector(std::string text, Tree tree) : text_(std::move(text)), tree_(std::move(tree)) {}

Result<std::shared_ptr<const Selector>> parse(std::string_view text, const Limits& limits) {
  auto tree = parse_tree(text, limits);
  if (!tree) return unexpected(std::move(tree).error());
  return std::shared_ptr<const Selector>(new Selector(std::string(text), std::move(*tree)));
}

}  // namespace carrier::selector
