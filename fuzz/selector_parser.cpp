// libFuzzer target for JMS message selectors: the lexer, the parser and the evaluator.
//
// Input: the selector text, as a subscriber sends it in a SUBSCRIBE header. Checks:
// - an error has the documented shape, "selector: <what> at position N" with N <= the size;
// - a selector that parses prints (to_text) as text that parses again to the same text;
// - the original and the re-parsed tree give the same truth value on a few messages whose
//   properties take the selector's own string literals and some numeric/boolean texts;
// - each LIKE pattern's fast shape (exact/prefix/suffix/contains) agrees with the general
//   matcher on those values (when both are well-formed UTF-8).
// ASan/UBSan find the rest (deep nesting, overflow, out-of-range reads).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "model/message.hpp"
#include "selector/evaluator.hpp"
#include "selector/lexer.hpp"
#include "selector/parser.hpp"
#include "selector/selector.hpp"

namespace {

using namespace carrier::model;
using namespace carrier::selector;

// The canonical text has more parentheses than the original, and may be longer.
constexpr Limits kReparseLimits{.max_length = std::size_t(1) << 24, .max_depth = 1000};

void check_error_shape(const std::string& detail, std::size_t size) {
  constexpr std::string_view kPrefix = "selector: ";
  constexpr std::string_view kAt = " at position ";
  FUZZ_CHECK(std::string_view(detail).substr(0, kPrefix.size()) == kPrefix);
  const auto at = detail.rfind(kAt);
  FUZZ_CHECK(at != std::string::npos);
  const std::string digits = detail.substr(at + kAt.size());
  FUZZ_CHECK(!digits.empty() && digits.size() < 20);
  std::size_t position = 0;
  for (const char c : digits) {
    FUZZ_CHECK(c >= '0' && c <= '9');
    position = position * 10 + static_cast<std::size_t>(c - '0');
  }
  FUZZ_CHECK(position <= size);
}

// The same pattern forced through the general matcher.
LikePattern as_general(const LikePattern& p) {
  std::vector<LikeUnit> units;
  const bool leading = p.shape == LikePattern::Shape::suffix || p.shape == LikePattern::Shape::contains;
  const bool trailing = p.shape == LikePattern::Shape::prefix || p.shape == LikePattern::Shape::contains;
  if (leading) units.push_back({LikeUnit::Kind::any, {}});
  if (!p.literal.empty()) units.push_back({LikeUnit::Kind::literal, p.literal});
  if (trailing) units.push_back({LikeUnit::Kind::any, {}});
  return build_like(units, false);
}

// Every character complete (ASCII or a whole multi-byte sequence). The shapes compare bytes and
// the general matcher characters; they agree on such text, and may not on broken UTF-8.
bool well_formed(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = utf8_char_length(text, i);
    if (length == 1 && static_cast<unsigned char>(text[i]) >= 0x80) return false;
    i += length;
  }
  return true;
}

std::vector<Message> messages_for(const Tree& tree) {
  std::vector<std::string> pool = {"1", "-2.5", "100", "1e3", "true", "FALSE", "", "abc"};
  std::vector<std::string> names;
  for (const Node& node : tree.nodes) {
    if (node.op == Op::string) pool.push_back(tree.strings[node.index]);
    if (node.op == Op::property) names.push_back(tree.strings[node.index]);
  }
  for (const auto& set : tree.sets) pool.insert(pool.end(), set.begin(), set.end());
  for (const auto& pattern : tree.patterns) pool.push_back(pattern.literal);
  std::vector<Message> out;
  for (std::size_t variant = 0; variant < 4; ++variant) {
    Message m;
    m.priority = static_cast<std::uint8_t>(variant * 3);
    m.timestamp_ms = static_cast<std::int64_t>(variant) * 1000;
    m.expires_ms = variant == 0 ? 0 : 5000;
    m.persistent = variant % 2 == 1;
    m.correlation_id = variant == 0 ? "" : pool[variant % pool.size()];
    m.type = variant == 1 ? "" : pool[(variant + 1) % pool.size()];
    m.reply_to = variant == 2 ? "" : "/queue/r";
    if (variant != 0) m.id = MessageId{variant, variant * 7};
    // Variant 3 leaves every property absent (all NULL).
    if (variant != 3) {
      for (const auto& name : names) {
        const std::size_t pick = (std::hash<std::string>{}(name) + variant) % pool.size();
        m.properties.emplace_back(name, pool[pick]);
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse(text);
  if (!parsed) {
    check_error_shape(parsed.error().detail, size);
    return 0;
  }
  const Tree& tree = (*parsed)->tree();
  const std::string canonical = to_text(tree);
  auto again = parse(canonical, kReparseLimits);
  if (!again) std::fprintf(stderr, "canonical %s: %s\n", canonical.c_str(), again.error().detail.c_str());
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(to_text((*again)->tree()) == canonical);

  const auto messages = messages_for(tree);
  for (const Message& m : messages) {
    const Truth t = evaluate(tree, m);
    FUZZ_CHECK(evaluate((*again)->tree(), m) == t);
    FUZZ_CHECK(matches(**parsed, m) == (t == Truth::yes));
  }
  for (const LikePattern& pattern : tree.patterns) {
    if (pattern.shape == LikePattern::Shape::general) continue;
    if (!well_formed(pattern.literal)) continue;
    const LikePattern general = as_general(pattern);
    for (const Message& m : messages) {
      for (const auto& [name, value] : m.properties) {
        if (!well_formed(value)) continue;
        FUZZ_CHECK(like_matches(pattern, value) == like_matches(general, value));
      }
    }
    FUZZ_CHECK(like_matches(pattern, pattern.literal) == like_matches(general, pattern.literal));
  }
  return 0;
}
