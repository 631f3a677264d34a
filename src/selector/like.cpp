// LIKE: compiling a pattern (build_like) and matching it in linear time (like_matches). The
// algorithm and its cost are described at LikePattern in parser.hpp and in docs/selectors.md.

#include <algorithm>
#include <array>

#include "selector/evaluator.hpp"
#include "selector/lexer.hpp"
#include "selector/parser.hpp"

namespace carrier::selector {

namespace {

using Segment = LikePattern::Segment;
constexpr std::uint32_t kAnyChar = LikePattern::kAnyChar;

// A 'contains' literal up to this long uses std::string_view::find (memchr-driven, fastest for
// the short literals selectors use; O(text * literal) at worst, so bounded); a longer one KMP.
constexpr std::size_t kShortLiteral = 64;

// Shift-and state lives on the stack: matching allocates nothing. compile_like refuses a longer
// segment (the selector text limit is far below it anyway).
constexpr std::size_t kMaxWords = kMaxLikeSegmentChars / 64;

// utf8_char_length, with ASCII answered here: this runs once per character of the text.
inline std::size_t char_length(std::string_view text, std::size_t pos) {
  return static_cast<unsigned char>(text[pos]) < 0x80 ? 1 : utf8_char_length(text, pos);
}

inline std::uint32_t char_key(std::string_view text, std::size_t pos, std::size_t length) {
  if (length == 1) return static_cast<unsigned char>(text[pos]);
  std::uint32_t key = 0;
  for (std::size_t k = 0; k < length; ++k) key = key << 8 | static_cast<unsigned char>(text[pos + k]);
  return key;
}

template <typename T>
std::vector<std::uint32_t> failure_function(const T& p) {
  std::vector<std::uint32_t> f(p.size(), 0);
  std::uint32_t k = 0;
  for (std::size_t i = 1; i < p.size(); ++i) {
    while (k > 0 && p[i] != p[k]) k = f[k - 1];
    if (p[i] == p[k]) ++k;
    f[i] = k;
  }
  return f;
}

void prepare_search(Segment& s) {
  if (!s.has_any_char) {
    s.failure = failure_function(s.chars);
    return;
  }
  const std::size_t m = s.chars.size();
  s.words = static_cast<std::uint32_t>((m + 63) / 64);
  for (const auto c : s.chars) {
    if (c != kAnyChar) s.keys.push_back(c);
  }
  std::sort(s.keys.begin(), s.keys.end());
  s.keys.erase(std::unique(s.keys.begin(), s.keys.end()), s.keys.end());
  const auto key_index = [&s](std::uint32_t c) {
    return static_cast<std::size_t>(std::lower_bound(s.keys.begin(), s.keys.end(), c) - s.keys.begin());
  };
  if (s.words == 1) {
    s.masks.assign(s.keys.size() + 1, 0);
    for (std::size_t j = 0; j < m; ++j) {
      const std::uint64_t bit = std::uint64_t{1} << j;
      if (s.chars[j] != kAnyChar) {
        s.masks[key_index(s.chars[j])] |= bit;
      } else {
        for (auto& mask : s.masks) mask |= bit;  // '_' takes any character
      }
    }
    return;
  }
  s.masks.assign(s.words, 0);
  // (key, word, bits) for each literal position, merged per (key, word).
  struct Bit {
    std::size_t key;
    std::uint32_t word;
    std::uint64_t bits;
  };
  std::vector<Bit> bits;
  for (std::size_t j = 0; j < m; ++j) {
    const auto word = static_cast<std::uint32_t>(j / 64);
    const std::uint64_t bit = std::uint64_t{1} << (j % 64);
    if (s.chars[j] == kAnyChar) {
      s.masks[word] |= bit;
    } else {
      bits.push_back({key_index(s.chars[j]), word, bit});
    }
  }
  std::sort(bits.begin(), bits.end(),
            [](const Bit& a, const Bit& b) { return a.key != b.key ? a.key < b.key : a.word < b.word; });
  s.key_first.assign(s.keys.size() + 1, 0);
  for (const auto& b : bits) {
    if (!s.key_bits.empty() && s.key_first[b.key + 1] > s.key_first[b.key] && s.key_bits.back().word == b.word) {
      s.key_bits.back().bits |= b.bits;
      continue;
    }
    s.key_bits.push_back({b.word, b.bits});
    s.key_first[b.key + 1] = static_cast<std::uint32_t>(s.key_bits.size());
  }
  // Keys are dense 0..size-1 and each has at least one bit, so every key_first[k + 1] was set
  // above; key_first[0] is 0.
}

// Matches `s` at `pos` (anchored): advances pos past it.
bool match_at(const Segment& s, std::string_view text, std::size_t& pos) {
  for (const auto c : s.chars) {
    if (pos >= text.size()) return false;
    const std::size_t length = char_length(text, pos);
    if (c != kAnyChar && c != char_key(text, pos, length)) return false;
    pos += length;
  }
  return true;
}

// Finds the leftmost match of `s` at or after `pos` (on a character boundary): pos goes past it.
bool find_kmp(const Segment& s, std::string_view text, std::size_t& pos) {
  const auto& p = s.chars;
  std::uint32_t q = 0;
  for (std::size_t t = pos; t < text.size();) {
    const std::size_t length = char_length(text, t);
    const std::uint32_t c = char_key(text, t, length);
    t += length;
    while (q > 0 && p[q] != c) q = s.failure[q - 1];
    if (p[q] == c) ++q;
    if (q == p.size()) {
      pos = t;
      return true;
    }
  }
  return false;
}

std::size_t key_of(const Segment& s, std::uint32_t c) {
  const auto it = std::lower_bound(s.keys.begin(), s.keys.end(), c);
  return it != s.keys.end() && *it == c ? static_cast<std::size_t>(it - s.keys.begin()) : s.keys.size();
}

bool find_shift_and(const Segment& s, std::string_view text, std::size_t& pos) {
  const std::size_t m = s.chars.size();
  const std::size_t last_word = (m - 1) / 64;
  const std::uint64_t last_bit = std::uint64_t{1} << ((m - 1) % 64);
  if (s.words == 1) {
    std::uint64_t d = 0;
    for (std::size_t t = pos; t < text.size();) {
      const std::size_t length = char_length(text, t);
      d = (d << 1 | 1) & s.masks[key_of(s, char_key(text, t, length))];
      t += length;
      if ((d & last_bit) != 0) {
        pos = t;
        return true;
      }
    }
    return false;
  }
  std::array<std::uint64_t, kMaxWords> d;  // NOLINT: the first `words` are set below
  std::fill_n(d.begin(), s.words, 0);
  for (std::size_t t = pos; t < text.size();) {
    const std::size_t length = char_length(text, t);
    const std::size_t k = key_of(s, char_key(text, t, length));
    const Segment::WordBits* extra = nullptr;
    const Segment::WordBits* extra_end = nullptr;
    if (k < s.keys.size()) {
      extra = s.key_bits.data() + s.key_first[k];
      extra_end = s.key_bits.data() + s.key_first[k + 1];
    }
    t += length;
    std::uint64_t carry = 1;
    for (std::uint32_t w = 0; w < s.words; ++w) {
      const std::uint64_t shifted = d[w] << 1 | carry;
      carry = d[w] >> 63;
      std::uint64_t allowed = s.masks[w];
      if (extra != extra_end && extra->word == w) allowed |= (extra++)->bits;
      d[w] = shifted & allowed;
    }
    if ((d[last_word] & last_bit) != 0) {
      pos = t;
      return true;
    }
  }
  return false;
}

// Whether the text from `pos` ends with `s`: count the characters left, skip to the last
// s.chars.size() of them, match there.
bool match_end(const Segment& s, std::string_view text, std::size_t pos) {
  if (s.chars.empty()) return true;  // the pattern ends with '%'
  std::size_t left = 0;
  for (std::size_t t = pos; t < text.size(); t += char_length(text, t)) ++left;
  if (left < s.chars.size()) return false;
  for (std::size_t skip = left - s.chars.size(); skip > 0; --skip) pos += char_length(text, pos);
  return match_at(s, text, pos) && pos == text.size();
}

bool find_kmp_bytes(std::string_view pattern, const std::vector<std::uint32_t>& failure,
                    std::string_view text) {
  std::uint32_t q = 0;
  for (const char c : text) {
    while (q > 0 && pattern[q] != c) q = failure[q - 1];
    if (pattern[q] == c) ++q;
    if (q == pattern.size()) return true;
  }
  return false;
}

}  // namespace

LikePattern build_like(const std::vector<LikeUnit>& units, bool shapes) {
  using Kind = LikeUnit::Kind;
  LikePattern out;
  const bool has_one = std::any_of(units.begin(), units.end(), [](const LikeUnit& u) { return u.kind == Kind::one; });
  // '%%' is '%'.
  std::vector<LikeUnit> collapsed;
  for (const auto& u : units) {
    if (u.kind == Kind::any && !collapsed.empty() && collapsed.back().kind == Kind::any) continue;
    collapsed.push_back(u);
  }
  const auto anys = std::count_if(collapsed.begin(), collapsed.end(), [](const LikeUnit& u) { return u.kind == Kind::any; });
  const bool leading = !collapsed.empty() && collapsed.front().kind == Kind::any;
  const bool trailing = !collapsed.empty() && collapsed.back().kind == Kind::any;
  if (shapes && !has_one) {
    std::string literal;
    for (const auto& u : collapsed) {
      if (u.kind == Kind::literal) literal += u.text;
    }
    if (anys == 0) {
      out.shape = LikePattern::Shape::exact;
    } else if (anys == 1 && trailing) {
      out.shape = LikePattern::Shape::prefix;
    } else if (anys == 1 && leading) {
      out.shape = LikePattern::Shape::suffix;
    } else if (anys == 2 && leading && trailing) {
      out.shape = LikePattern::Shape::contains;
    }
    if (out.shape != LikePattern::Shape::general) {
      out.literal = std::move(literal);
      if (out.shape == LikePattern::Shape::contains && out.literal.size() > kShortLiteral) {
        out.failure = failure_function(out.literal);
      }
      return out;
    }
  }
  out.shape = LikePattern::Shape::general;
  out.segments.emplace_back();
  for (const auto& u : collapsed) {
    Segment& s = out.segments.back();
    switch (u.kind) {
      case Kind::any:
        out.segments.emplace_back();
        break;
      case Kind::one:
        s.chars.push_back(kAnyChar);
        s.has_any_char = true;
        break;
      case Kind::literal:
        for (std::size_t i = 0; i < u.text.size();) {
          const std::size_t length = utf8_char_length(u.text, i);
          s.chars.push_back(char_key(u.text, i, length));
          i += length;
        }
        break;
    }
  }
  // Only middle segments are searched for; they are never empty ('%%' was collapsed).
  for (std::size_t i = 1; i + 1 < out.segments.size(); ++i) prepare_search(out.segments[i]);
  return out;
}

bool like_matches(const LikePattern& pattern, std::string_view text) {
  using Shape = LikePattern::Shape;
  switch (pattern.shape) {
    case Shape::exact: return text == pattern.literal;
    case Shape::prefix: return text.starts_with(pattern.literal);
    case Shape::suffix: return text.ends_with(pattern.literal);
    case Shape::contains:
      if (pattern.failure.empty()) return text.find(pattern.literal) != std::string_view::npos;
      return find_kmp_bytes(pattern.literal, pattern.failure, text);
    case Shape::general: break;
  }
  const auto& segments = pattern.segments;
  std::size_t pos = 0;
  if (!match_at(segments.front(), text, pos)) return false;
  if (segments.size() == 1) return pos == text.size();
  for (std::size_t i = 1; i + 1 < segments.size(); ++i) {
    const Segment& s = segments[i];
    const bool found = s.has_any_char ? find_shift_and(s, text, pos) : find_kmp(s, text, pos);
    if (!found) return false;
  }
  return match_end(segments.back(), text, pos);
}

}  // namespace carrier::selector
