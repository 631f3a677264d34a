#include "selector/lexer.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <system_error>
#include <utility>

namespace carrier::selector {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\n'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_identifier_start(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || u >= 0x80;
}
bool is_identifier_part(char c) { return is_identifier_start(c) || is_digit(c); }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i];
    if (x >= 'a' && x <= 'z') x = static_cast<char>(x - 'a' + 'A');
    if (x != b[i]) return false;
  }
  return true;
}

constexpr std::array<std::pair<std::string_view, TokenKind>, 11> kKeywords{{
    {"AND", TokenKind::kw_and},
    {"OR", TokenKind::kw_or},
    {"NOT", TokenKind::kw_not},
    {"BETWEEN", TokenKind::kw_between},
    {"IN", TokenKind::kw_in},
    {"LIKE", TokenKind::kw_like},
    {"ESCAPE", TokenKind::kw_escape},
    {"IS", TokenKind::kw_is},
    {"NULL", TokenKind::kw_null},
    {"TRUE", TokenKind::kw_true},
    {"FALSE", TokenKind::kw_false},
}};

TokenKind keyword_or_identifier(std::string_view word) {
  for (const auto& [name, kind] : kKeywords) {
    if (iequals(word, name)) return kind;
  }
  return TokenKind::identifier;
}

// A character for an error message: printable ASCII as itself, anything else as \xNN.
std::string show_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("'\\x{:02x}'", u);
}

// Scans a numeric literal at text[pos] (a digit, or '.' then a digit).
Result<Token> scan_number(std::string_view text, std::size_t pos) {
  std::size_t i = pos;
  bool real = false;
  while (i < text.size() && is_digit(text[i])) ++i;
  if (i < text.size() && text[i] == '.') {
    real = true;
    ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    real = true;
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (i >= text.size() || !is_digit(text[i])) {
      return selector_error(Errc::invalid_argument, "malformed number", pos);
    }
    while (i < text.size() && is_digit(text[i])) ++i;
  }
  // "12abc", "1.2.3": not two tokens but a typo.
  if (i < text.size() && (is_identifier_part(text[i]) || text[i] == '.')) {
    return selector_error(Errc::invalid_argument, "malformed number", pos);
  }
  Token token;
  token.pos = pos;
  token.text = text.substr(pos, i - pos);
  if (!real) {
    token.kind = TokenKind::integer;
    const auto [end, ec] =
        std::from_chars(token.text.data(), token.text.data() + token.text.size(), token.integer);
    if (ec != std::errc() || end != token.text.data() + token.text.size() ||
        token.integer > kMinLongMagnitude) {
      return selector_error(Errc::invalid_argument, "integer literal out of range", pos);
    }
    return token;
  }
  // from_chars wants a digit on both sides of the point: ".5" -> "0.5", "7." and "7.e3" -> "7.0".
  std::string normal;
  normal.reserve(token.text.size() + 2);
  for (std::size_t k = 0; k < token.text.size(); ++k) {
    const char c = token.text[k];
    if (c == '.' && k == 0) normal.push_back('0');
    normal.push_back(c);
    if (c == '.' && (k + 1 == token.text.size() || !is_digit(token.text[k + 1]))) {
      normal.push_back('0');
    }
  }
  token.kind = TokenKind::real;
  const auto [end, ec] = std::from_chars(normal.data(), normal.data() + normal.size(), token.real);
  if (ec != std::errc() || end != normal.data() + normal.size()) {
    return selector_error(Errc::invalid_argument, "number out of range", pos);
  }
  return token;
}

}  // namespace

std::size_t utf8_char_length(std::string_view text, std::size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  std::size_t length = 1;
  if (lead >= 0xc0 && lead < 0xe0) {
    length = 2;
  } else if (lead >= 0xe0 && lead < 0xf0) {
    length = 3;
  } else if (lead >= 0xf0 && lead < 0xf8) {
    length = 4;
  }
  if (pos + length > text.size()) return 1;
  for (std::size_t k = 1; k < length; ++k) {
    if ((static_cast<unsigned char>(text[pos + k]) & 0xc0) != 0x80) return 1;
  }
  return length;
}

Unexpected selector_error(Errc code, std::string_view what, std::size_t pos) {
  return unexpected(code, fmt::format("selector: {} at position {}", what, pos));
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case TokenKind::end:
      return "end of input";
    case TokenKind::identifier:
    case TokenKind::integer:
    case TokenKind::real:
      return fmt::format("'{}'", token.text.substr(0, 40));
    case TokenKind::string:
      return "string literal";
    default:
      // Keywords as written in upper case, punctuation quoted.
      if (token.kind >= TokenKind::kw_and && token.kind <= TokenKind::kw_false) {
        std::string word(token.text);
        for (char& c : word) {
          if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
        }
        return word;
      }
      return fmt::format("'{}'", token.text);
  }
}

Result<std::vector<Token>> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (true) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    const std::size_t start = i;
    const char c = text[i];
    if (is_identifier_start(c)) {
      while (i < text.size() && is_identifier_part(text[i])) ++i;
      Token token;
      token.pos = start;
      token.text = text.substr(start, i - start);
      token.kind = keyword_or_identifier(token.text);
      tokens.push_back(std::move(token));
      continue;
    }
    if (is_digit(c) || (c == '.' && i + 1 < text.size() && is_digit(text[i + 1]))) {
      auto number = scan_number(text, start);
      if (!number) return unexpected(std::move(number).error());
      i = start + number->text.size();
      tokens.push_back(std::move(*number));
      continue;
    }
    if (c == '\'') {
      Token token;
      token.kind = TokenKind::string;
      token.pos = start;
      ++i;
      bool closed = false;
      while (i < text.size()) {
        if (text[i] == '\'') {
          if (i + 1 < text.size() && text[i + 1] == '\'') {
            token.value.push_back('\'');
            i += 2;
            continue;
          }
          ++i;
          closed = true;
          break;
        }
        token.value.push_back(text[i]);
        ++i;
      }
      if (!closed) return selector_error(Errc::invalid_argument, "unterminated string literal", start);
      token.text = text.substr(start, i - start);
      tokens.push_back(std::move(token));
      continue;
    }
    TokenKind kind = TokenKind::end;
    std::size_t length = 1;
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    switch (c) {
      case '(': kind = TokenKind::left_paren; break;
      case ')': kind = TokenKind::right_paren; break;
      case ',': kind = TokenKind::comma; break;
      case '=': kind = TokenKind::equal; break;
      case '+': kind = TokenKind::plus; break;
      case '-': kind = TokenKind::minus; break;
      case '*': kind = TokenKind::star; break;
      case '/': kind = TokenKind::slash; break;
      case '<':
        if (next == '>') {
          kind = TokenKind::not_equal;
          length = 2;
        } else if (next == '=') {
          kind = TokenKind::less_equal;
          length = 2;
        } else {
          kind = TokenKind::less;
        }
        break;
      case '>':
        if (next == '=') {
          kind = TokenKind::greater_equal;
          length = 2;
        } else {
          kind = TokenKind::greater;
        }
        break;
      default:
        return selector_error(Errc::invalid_argument,
                              fmt::format("unexpected character {}", show_char(c)), start);
    }
    Token token;
    token.kind = kind;
    token.pos = start;
    token.text = text.substr(start, length);
    tokens.push_back(std::move(token));
    i += length;
  }
  Token end;
  end.kind = TokenKind::end;
  end.pos = text.size();
  end.text = text.substr(text.size());
  tokens.push_back(std::move(end));
  return tokens;
}

}  // namespace carrier::selector
