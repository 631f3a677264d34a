#include <gtest/gtest.h>

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "selector/evaluator.hpp"
#include "selector/lexer.hpp"
#include "selector/parser.hpp"
#include "selector/selector.hpp"

// like.cpp's matcher (build_like, like_matches) against a plain reference implementation, and
// the hostile patterns it must answer in linear time.

namespace carrier::selector {
namespace {

// --- the LIKE matcher against a reference ---------------------------------------------------

// A pattern element for the reference: a character (its bytes), '_' or '%'.
struct RefUnit {
  LikeUnit::Kind kind;
  std::string text;
};

std::vector<std::string> characters(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_char_length(text, i);
    out.emplace_back(text.substr(i, length));
    i += length;
  }
  return out;
}

// The definition, directly: can units[u..] match chars[t..]? Memoised, O(text * pattern).
bool reference_like(const std::vector<RefUnit>& units, std::string_view text) {
  const auto chars = characters(text);
  const std::size_t n = chars.size();
  const std::size_t m = units.size();
  // can[u][t]: units from u match chars from t.
  std::vector<std::vector<char>> can(m + 1, std::vector<char>(n + 1, 0));
  can[m][n] = 1;
  for (std::size_t u = m; u-- > 0;) {
    for (std::size_t t = n + 1; t-- > 0;) {
      const RefUnit& unit = units[u];
      bool ok = false;
      if (unit.kind == LikeUnit::Kind::any) {
        ok = can[u + 1][t] || (t < n && can[u][t + 1]);
      } else if (t < n) {
        ok = (unit.kind == LikeUnit::Kind::one || chars[t] == unit.text) && can[u + 1][t + 1];
      }
      can[u][t] = ok ? 1 : 0;
    }
  }
  return can[0][0] != 0;
}

// The pattern as selector text with ESCAPE '!'.
std::string pattern_text(const std::vector<RefUnit>& units) {
  std::string out;
  for (const auto& u : units) {
    if (u.kind == LikeUnit::Kind::any) {
      out += '%';
    } else if (u.kind == LikeUnit::Kind::one) {
      out += '_';
    } else {
      if (u.text == "%" || u.text == "_" || u.text == "!") out += '!';
      out += u.text;
    }
  }
  return out;
}

const LikePattern& compiled(const std::vector<RefUnit>& units,
                            std::shared_ptr<const Selector>& keep) {
  const std::string text = "x LIKE '" + pattern_text(units) + "' ESCAPE '!'";
  auto selector = parse(text, Limits{.max_length = 1u << 20, .max_depth = 100});
  EXPECT_TRUE(selector.has_value()) << text;
  keep = *selector;
  return keep->tree().patterns.at(0);
}

TEST(SelectorLike, AgreesWithTheReferenceOnRandomPatterns) {
  // One to four bytes, and the pattern's own special characters as text.
  const std::vector<std::string> alphabet = {"a", "b", "\xc3\xa9", "\xe2\x82\xac",
                                             "\xf0\x9f\x98\x80", "%", "_", "!"};
  std::mt19937 random(20261130);
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(random); };
  std::size_t matched = 0;
  for (int round = 0; round < 20000; ++round) {
    // Small alphabets make matches common; long texts and patterns reach multi-word shift-and.
    const std::size_t letters = 1 + pick(alphabet.size());
    const bool long_case = round % 50 == 0;
    std::string text;
    const std::size_t text_chars = pick(long_case ? 400 : 24);
    for (std::size_t i = 0; i < text_chars; ++i) text += alphabet[pick(letters)];
    std::vector<RefUnit> units;
    if (long_case && !text.empty()) {
      // A piece of the text with some characters turned into '_', between '%'s.
      const auto chars = characters(text);
      const std::size_t from = pick(chars.size());
      const std::size_t to = from + pick(chars.size() - from) + 1;
      if (pick(2) == 0) units.push_back({LikeUnit::Kind::any, {}});
      for (std::size_t i = from; i < to; ++i) {
        if (pick(8) == 0) {
          units.push_back({LikeUnit::Kind::one, {}});
        } else {
          units.push_back({LikeUnit::Kind::literal, chars[i]});
        }
        if (pick(40) == 0) units.push_back({LikeUnit::Kind::any, {}});
      }
      if (pick(2) == 0) units.push_back({LikeUnit::Kind::any, {}});
    } else {
      const std::size_t pattern_units = pick(10);
      for (std::size_t i = 0; i < pattern_units; ++i) {
        const std::size_t r = pick(letters + 2);
        if (r == letters) {
          units.push_back({LikeUnit::Kind::any, {}});
        } else if (r == letters + 1) {
          units.push_back({LikeUnit::Kind::one, {}});
        } else {
          units.push_back({LikeUnit::Kind::literal, alphabet[r]});
        }
      }
    }
    std::shared_ptr<const Selector> keep;
    const LikePattern& pattern = compiled(units, keep);
    const bool expected = reference_like(units, text);
    matched += expected ? 1 : 0;
    ASSERT_EQ(like_matches(pattern, text), expected)
        << "pattern '" << pattern_text(units) << "' text '" << text << "'";
  }
  // The cases are not all one answer.
  EXPECT_GT(matched, 2000u);
  EXPECT_LT(matched, 18000u);
}

TEST(SelectorLike, LongSegmentsWithUnderscoreUseManyWords) {
  std::string piece;
  for (int i = 0; i < 150; ++i) piece += static_cast<char>('a' + i % 7);
  std::vector<RefUnit> units = {{LikeUnit::Kind::any, {}}};
  for (std::size_t i = 0; i < piece.size(); ++i) {
    if (i % 10 == 3) {
      units.push_back({LikeUnit::Kind::one, {}});
    } else {
      units.push_back({LikeUnit::Kind::literal, std::string(1, piece[i])});
    }
  }
  units.push_back({LikeUnit::Kind::any, {}});
  std::shared_ptr<const Selector> keep;
  const LikePattern& pattern = compiled(units, keep);
  ASSERT_EQ(pattern.segments.size(), 3u);
  EXPECT_EQ(pattern.segments[1].words, 3u);
  // Tables that grow with the segment, not with distinct characters x words.
  EXPECT_EQ(pattern.segments[1].masks.size(), 3u);
  EXPECT_LE(pattern.segments[1].key_bits.size(), pattern.segments[1].chars.size());
  std::string text = "zz" + piece + "zz";
  EXPECT_TRUE(like_matches(pattern, text));
  text[2 + 149] = 'z';  // the last character of the piece
  EXPECT_FALSE(like_matches(pattern, text));
  text[2 + 149] = piece[149];
  text[2 + 3] = 'z';  // under a '_'
  EXPECT_TRUE(like_matches(pattern, text));
}

// The reported case: a 10 KB pattern against a 1 MB header backtracked for seconds. Each shape
// of hostile pattern now takes one pass (timed in bench/selector_bench, not here).
TEST(SelectorLike, HostilePatternsAgainstAMegabyte) {
  const std::string text(1u << 20, 'a');
  const std::string many(10000, 'a');
  const Limits big{.max_length = 1u << 20, .max_depth = 100};
  std::string underscores;
  for (int i = 0; i < 1000; ++i) underscores += "aaaaaaaaa_";
  for (const std::string& like : {"%" + many + "b%",            // contains, KMP over bytes
                                  "%" + many + "b%a",           // a middle segment, KMP
                                  "%" + underscores + "b%a",    // shift-and, 157 words
                                  std::string("%a%a%a%a%a%a%a%a%b_"),
                                  "%" + many.substr(0, 60) + "_b%a"}) {  // shift-and, 1 word
    auto selector = parse("x LIKE '" + like + "'", big);
    ASSERT_TRUE(selector.has_value());
    EXPECT_FALSE(like_matches((*selector)->tree().patterns.at(0), text)) << like.substr(0, 20);
    EXPECT_TRUE(like_matches((*selector)->tree().patterns.at(0), text + "b" + "a"))
        << like.substr(0, 20);
  }
}

TEST(SelectorLike, ShapesSkipTheGeneralMatcher) {
  const auto shape = [](std::string_view text) {
    auto s = parse(text);
    return s ? (*s)->tree().patterns.at(0).shape : LikePattern::Shape::general;
  };
  EXPECT_EQ(shape("x LIKE 'abc'"), LikePattern::Shape::exact);
  EXPECT_EQ(shape("x LIKE 'abc%'"), LikePattern::Shape::prefix);
  EXPECT_EQ(shape("x LIKE '%abc'"), LikePattern::Shape::suffix);
  EXPECT_EQ(shape("x LIKE '%abc%'"), LikePattern::Shape::contains);
  EXPECT_EQ(shape("x LIKE '10!%%' ESCAPE '!'"), LikePattern::Shape::prefix);
  EXPECT_EQ(shape("x LIKE 'a_c'"), LikePattern::Shape::general);
  EXPECT_EQ(shape("x LIKE 'a%c'"), LikePattern::Shape::general);
}

}  // namespace
}  // namespace carrier::selector
