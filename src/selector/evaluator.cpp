#include "selector/evaluator.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <system_error>

#include "selector/lexer.hpp"
#include "selector/selector.hpp"

namespace carrier::selector {

using model::Message;

namespace {

// A value during evaluation. Strings are views into the message or the tree: evaluation copies
// no text.
struct Value {
  enum class Kind : std::uint8_t { null, boolean, integer, real, string };
  Kind kind = Kind::null;
  // A user property: its text is also read as a number or a boolean where the other operand
  // wants one (STOMP headers are strings; `amount > 100` must work).
  bool from_property = false;
  bool boolean = false;
  std::int64_t integer = 0;
  double real = 0;
  std::string_view string;

  bool is_number() const { return kind == Kind::integer || kind == Kind::real; }
  double as_double() const { return kind == Kind::integer ? static_cast<double>(integer) : real; }

  static Value null() { return {}; }
  static Value of_bool(bool b) {
    Value v;
    v.kind = Kind::boolean;
    v.boolean = b;
    return v;
  }
  static Value of_integer(std::int64_t i) {
    Value v;
    v.kind = Kind::integer;
    v.integer = i;
    return v;
  }
  static Value of_real(double d) {
    Value v;
    v.kind = Kind::real;
    v.real = d;
    return v;
  }
  static Value of_string(std::string_view s, bool from_property = false) {
    Value v;
    v.kind = Kind::string;
    v.string = s;
    v.from_property = from_property;
    return v;
  }
};

using Kind = Value::Kind;

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }

bool iequals_lower(std::string_view a, std::string_view lower) {
  if (a.size() != lower.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char c = a[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

// A property's text as a number, if all of it is one: [+-] digits [. digits] [e [+-] digits]
// (or .digits). Integers that fit a long stay exact; no spaces, hex, NaN or Infinity.
std::optional<Value> parse_number(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  const std::size_t digits_from = i;
  while (i < text.size() && is_ascii_digit(text[i])) ++i;
  std::size_t digits = i - digits_from;
  bool real = false;
  if (i < text.size() && text[i] == '.') {
    real = true;
    ++i;
    const std::size_t from = i;
    while (i < text.size() && is_ascii_digit(text[i])) ++i;
    digits += i - from;
  }
  if (digits == 0) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    real = true;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const std::size_t from = i;
    while (i < text.size() && is_ascii_digit(text[i])) ++i;
    if (i == from) return std::nullopt;
  }
  if (i != text.size()) return std::nullopt;
  // from_chars takes '-' but not '+'.
  const std::string_view body = text[0] == '+' ? text.substr(1) : text;
  const char* first = body.data();
  const char* last = body.data() + body.size();
  if (!real) {
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(first, last, value);
    if (ec == std::errc() && end == last) return Value::of_integer(value);
    // Too long for a long: read it as a double below.
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || end != last) return std::nullopt;
  return Value::of_real(value);
}

std::optional<Value> as_number(const Value& v) {
  if (v.is_number()) return v;
  if (v.kind == Kind::string && v.from_property) return parse_number(v.string);
  return std::nullopt;
}

std::optional<bool> as_bool(const Value& v) {
  if (v.kind == Kind::boolean) return v.boolean;
  if (v.kind == Kind::string && v.from_property) {
    if (iequals_lower(v.string, "true")) return true;
    if (iequals_lower(v.string, "false")) return false;
  }
  return std::nullopt;
}

Truth truth_of(bool b) { return b ? Truth::yes : Truth::no; }

Truth to_truth(const Value& v) {
  const auto b = as_bool(v);
  return b ? truth_of(*b) : Truth::unknown;
}

Value to_value(Truth t) { return t == Truth::unknown ? Value::null() : Value::of_bool(t == Truth::yes); }

// -1, 0, 1, or nullopt when unordered (NaN).
std::optional<int> compare_numbers(const Value& a, const Value& b) {
  if (a.kind == Kind::integer && b.kind == Kind::integer) {
    return a.integer < b.integer ? -1 : a.integer > b.integer ? 1 : 0;
  }
  const double x = a.as_double();
  const double y = b.as_double();
  if (x < y) return -1;
  if (x > y) return 1;
  if (x == y) return 0;
  return std::nullopt;
}

// = and <>: nullopt when the types do not compare (the result is then UNKNOWN).
std::optional<bool> equals(const Value& a, const Value& b) {
  if (a.kind == Kind::string && b.kind == Kind::string) return a.string == b.string;
  if (a.is_number() || b.is_number()) {
    const auto x = as_number(a);
    const auto y = as_number(b);
    if (!x || !y) return std::nullopt;
    const auto c = compare_numbers(*x, *y);
    return c && *c == 0;
  }
  if (a.kind == Kind::boolean || b.kind == Kind::boolean) {
    const auto x = as_bool(a);
    const auto y = as_bool(b);
    if (!x || !y) return std::nullopt;
    return *x == *y;
  }
  return std::nullopt;
}

Truth compare(const Value& a, const Value& b, Op op) {
  if (a.kind == Kind::null || b.kind == Kind::null) return Truth::unknown;
  if (op == Op::equal || op == Op::not_equal) {
    const auto eq = equals(a, b);
    if (!eq) return Truth::unknown;
    return truth_of(op == Op::equal ? *eq : !*eq);
  }
  // Ordering is for numbers only (a property's text counts if it is one).
  const auto x = as_number(a);
  const auto y = as_number(b);
  if (!x || !y) return Truth::unknown;
  const auto c = compare_numbers(*x, *y);
  if (!c) return Truth::no;  // NaN: every ordering is false, as in Java
  switch (op) {
    case Op::less: return truth_of(*c < 0);
    case Op::less_equal: return truth_of(*c <= 0);
    case Op::greater: return truth_of(*c > 0);
    default: return truth_of(*c >= 0);
  }
}

Truth and3(Truth a, Truth b) {
  if (a == Truth::no || b == Truth::no) return Truth::no;
  if (a == Truth::yes && b == Truth::yes) return Truth::yes;
  return Truth::unknown;
}

Truth or3(Truth a, Truth b) {
  if (a == Truth::yes || b == Truth::yes) return Truth::yes;
  if (a == Truth::no && b == Truth::no) return Truth::no;
  return Truth::unknown;
}

Truth not3(Truth a) {
  if (a == Truth::unknown) return a;
  return a == Truth::yes ? Truth::no : Truth::yes;
}

// Java long arithmetic: wraps on overflow (done in unsigned, where wrapping is defined).
std::int64_t wrap(std::uint64_t v) { return static_cast<std::int64_t>(v); }

Value arithmetic(Op op, const Value& a, const Value& b) {
  const auto x = as_number(a);
  const auto y = as_number(b);
  if (!x || !y) return Value::null();
  if (x->kind == Kind::integer && y->kind == Kind::integer) {
    const auto p = static_cast<std::uint64_t>(x->integer);
    const auto q = static_cast<std::uint64_t>(y->integer);
    switch (op) {
      case Op::add: return Value::of_integer(wrap(p + q));
      case Op::subtract: return Value::of_integer(wrap(p - q));
      case Op::multiply: return Value::of_integer(wrap(p * q));
      default:
        if (y->integer == 0) return Value::null();
        if (x->integer == std::numeric_limits<std::int64_t>::min() && y->integer == -1) {
          return Value::of_integer(x->integer);
        }
        return Value::of_integer(x->integer / y->integer);
    }
  }
  const double p = x->as_double();
  const double q = y->as_double();
  switch (op) {
    case Op::add: return Value::of_real(p + q);
    case Op::subtract: return Value::of_real(p - q);
    case Op::multiply: return Value::of_real(p * q);
    default:
      if (q == 0) return Value::null();
      return Value::of_real(p / q);
  }
}

// One evaluation: the tree, the message, and room for JMSMessageID's text.
class Evaluator {
 public:
  Evaluator(const Tree& tree, const Message& message) : tree_(tree), message_(message) {}

  Truth truth(const Node& node) {
    switch (node.op) {
      case Op::boolean:
        return truth_of(node.boolean);
      case Op::logical_not:
        return not3(truth(tree_.child(node, 0)));
      case Op::logical_and: {
        Truth result = Truth::yes;
        for (std::uint32_t k = 0; k < node.child_count; ++k) {
          const Truth t = truth(tree_.child(node, k));
          if (t == Truth::no) return Truth::no;
          if (t == Truth::unknown) result = Truth::unknown;
        }
        return result;
      }
      case Op::logical_or: {
        Truth result = Truth::no;
        for (std::uint32_t k = 0; k < node.child_count; ++k) {
          const Truth t = truth(tree_.child(node, k));
          if (t == Truth::yes) return Truth::yes;
          if (t == Truth::unknown) result = Truth::unknown;
        }
        return result;
      }
      case Op::equal:
      case Op::not_equal:
      case Op::less:
      case Op::less_equal:
      case Op::greater:
      case Op::greater_equal:
        return compare(value(tree_.child(node, 0)), value(tree_.child(node, 1)), node.op);
      case Op::between:
      case Op::not_between: {
        const Value v = value(tree_.child(node, 0));
        const Value low = value(tree_.child(node, 1));
        const Value high = value(tree_.child(node, 2));
        if (node.op == Op::between) {
          return and3(compare(v, low, Op::greater_equal), compare(v, high, Op::less_equal));
        }
        return or3(compare(v, low, Op::less), compare(v, high, Op::greater));
      }
      case Op::in:
      case Op::not_in: {
        const Value v = value(tree_.child(node, 0));
        if (v.kind != Kind::string) return Truth::unknown;
        const auto& set = tree_.sets[node.index];
        const bool found = std::binary_search(set.begin(), set.end(), v.string, std::less<>());
        return truth_of(found == (node.op == Op::in));
      }
      case Op::like:
      case Op::not_like: {
        const Value v = value(tree_.child(node, 0));
        if (v.kind != Kind::string) return Truth::unknown;
        const bool match = like_matches(tree_.patterns[node.index], v.string);
        return truth_of(match == (node.op == Op::like));
      }
      case Op::is_null:
        return truth_of(value(tree_.child(node, 0)).kind == Kind::null);
      case Op::is_not_null:
        return truth_of(value(tree_.child(node, 0)).kind != Kind::null);
      case Op::integer:
      case Op::real:
      case Op::string:
      case Op::header:
      case Op::property:
      case Op::negate:
      case Op::add:
      case Op::subtract:
      case Op::multiply:
      case Op::divide:
        return to_truth(value(node));
    }
    return Truth::unknown;
  }

  Value value(const Node& node) {
    switch (node.op) {
      case Op::integer:
        return Value::of_integer(node.integer);
      case Op::real:
        return Value::of_real(node.real);
      case Op::string:
        return Value::of_string(tree_.strings[node.index]);
      case Op::header:
        return header(node.header);
      case Op::property: {
        const std::string& name = tree_.strings[node.index];
        for (const auto& [key, text] : message_.properties) {
          if (key == name) return Value::of_string(text, true);
        }
        return Value::null();
      }
      case Op::negate: {
        const auto v = as_number(value(tree_.child(node, 0)));
        if (!v) return Value::null();
        if (v->kind == Kind::integer) {
          return Value::of_integer(wrap(0 - static_cast<std::uint64_t>(v->integer)));
        }
        return Value::of_real(-v->real);
      }
      case Op::add:
      case Op::subtract:
      case Op::multiply:
      case Op::divide:
        return arithmetic(node.op, value(tree_.child(node, 0)), value(tree_.child(node, 1)));
      default:
        return to_value(truth(node));
    }
  }

 private:
  Value header(Header h) {
    const auto optional_string = [](const std::string& s) {
      return s.empty() ? Value::null() : Value::of_string(s);
    };
    switch (h) {
      case Header::priority: return Value::of_integer(message_.priority);
      case Header::timestamp: return Value::of_integer(message_.timestamp_ms);
      case Header::expiration: return Value::of_integer(message_.expires_ms);
      case Header::delivery_mode:
        return Value::of_string(message_.persistent ? "PERSISTENT" : "NON_PERSISTENT");
      case Header::correlation_id: return optional_string(message_.correlation_id);
      case Header::type: return optional_string(message_.type);
      case Header::reply_to: return optional_string(message_.reply_to);
      case Header::message_id:
        if (message_.id.is_nil()) return Value::null();
        return Value::of_string(message_id_text());
    }
    return Value::null();
  }

  // Written into a member buffer: no allocation.
  std::string_view message_id_text() {
    if (!id_ready_) {
      message_.id.to_chars(id_text_.data());
      id_ready_ = true;
    }
    return {id_text_.data(), id_text_.size()};
  }

  const Tree& tree_;
  const Message& message_;
  std::array<char, 36> id_text_{};
  bool id_ready_ = false;
};

}  // namespace

Truth evaluate(const Tree& tree, const Message& message) {
  if (tree.nodes.empty()) return Truth::unknown;
  Evaluator evaluator(tree, message);
  return evaluator.truth(tree.nodes[tree.root]);
}

bool matches(const Selector& selector, const Message& message) {
  return evaluate(selector.tree(), message) == Truth::yes;
}

}  // namespace carrier::selector
