#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace carrier::selector {

enum class TokenKind : std::uint8_t {
  end,  // after the last token, at text.size()
  identifier,
  string,   // 'it''s' -> value "it's"
  integer,  // exact numeric; magnitude only, the sign is an operator
  real,     // approximate numeric: 1.5, 7., .5, 7E3
  // Keywords, case-insensitive.
  kw_and,
  kw_or,
  kw_not,
  kw_between,
  kw_in,
  kw_like,
  kw_escape,
  kw_is,
  kw_null,
  kw_true,
  kw_false,
  // Punctuation.
  left_paren,
  right_paren,
  comma,
  equal,          // =
  not_equal,      // <>
  less,           // <
  less_equal,     // <=
  greater,        // >
  greater_equal,  // >=
  plus,
  minus,
  star,
  slash,
};

// The magnitude of the most negative long: an integer token may hold it, and only a unary minus
// directly before it makes it a value (the parser checks).
inline constexpr std::uint64_t kMinLongMagnitude = std::uint64_t(1) << 63;

struct Token {
  TokenKind kind = TokenKind::end;
  std::size_t pos = 0;      // 0-based offset of the token's first character in the selector
  std::string_view text;    // the token as written (a view into the selector text)
  std::string value;        // string: the literal with '' undone
  std::uint64_t integer = 0;  // integer: 0 .. kMinLongMagnitude
  double real = 0;            // real: finite
};

// Splits a selector into tokens; the last one is `end`. Whitespace is space, tab, form feed, CR
// and LF. Identifiers start with a letter, '_', '$' or any byte >= 0x80 (UTF-8, as Java allows
// Unicode letters) and go on with those and digits.
Result<std::vector<Token>> tokenize(std::string_view text);

// Bytes in the UTF-8 character starting at text[pos] (1 for a stray or truncated byte), so
// '_' in LIKE and the ESCAPE character mean one character, not one byte.
std::size_t utf8_char_length(std::string_view text, std::size_t pos);

// "selector: <what> at position <pos>", the one shape of every selector error.
Unexpected selector_error(Errc code, std::string_view what, std::size_t pos);

// For error messages: "')'", "AND", "end of input", "identifier 'x'".
std::string describe(const Token& token);

}  // namespace carrier::selector
