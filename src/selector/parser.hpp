#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace carrier::selector {

// The JMS header fields a selector may name. Everything else is a user property.
enum class Header : std::uint8_t {
  priority,        // JMSPriority: integer 0..9
  timestamp,       // JMSTimestamp: integer, epoch ms
  expiration,      // JMSExpiration: integer, epoch ms, 0 = never
  delivery_mode,   // JMSDeliveryMode: 'PERSISTENT' or 'NON_PERSISTENT'
  correlation_id,  // JMSCorrelationID: string, NULL when absent
  type,            // JMSType: string, NULL when absent
  message_id,      // JMSMessageID: the id's canonical text, NULL for the nil id
  reply_to,        // JMSReplyTo: string, NULL when absent
};

std::optional<Header> header_named(std::string_view identifier);
std::string_view header_name(Header header);

enum class Op : std::uint8_t {
  // Leaves.
  boolean,   // TRUE / FALSE
  integer,   // exact numeric (long)
  real,      // approximate numeric (double)
  string,    // string literal: strings[index]
  header,    // a JMS header field
  property,  // a user property named strings[index]
  // Unary: child 0.
  negate,
  logical_not,
  // Binary: children 0 and 1.
  add,
  subtract,
  multiply,
  divide,
  equal,
  not_equal,
  less,
  less_equal,
  greater,
  greater_equal,
  // n-ary (two or more children), so long OR chains stay shallow.
  logical_and,
  logical_or,
  // Children value, low, high.
  between,
  not_between,
  // Child 0 against sets[index].
  in,
  not_in,
  // Child 0 against patterns[index].
  like,
  not_like,
  // Child 0.
  is_null,
  is_not_null,
};

struct Node {
  Op op = Op::boolean;
  Header header = Header::priority;  // Op::header
  bool boolean = false;              // Op::boolean
  std::uint32_t first_child = 0;     // children are Tree::child_ids[first_child, +child_count)
  std::uint32_t child_count = 0;
  std::uint32_t index = 0;           // into strings (string, property), sets (in), patterns (like)
  std::int64_t integer = 0;          // Op::integer
  double real = 0;                   // Op::real
};

// A LIKE pattern compiled once. '%' is any sequence, '_' one character (one UTF-8 code point);
// the escape character makes the next character literal. Common shapes skip the general matcher.
//
// The general matcher works on characters (UTF-8 code points as utf8_char_length reads them: a
// byte that does not start a valid sequence is one character) and runs in linear time: the
// pattern is split at '%' into segments of fixed length in characters; the first is anchored at
// the start, the last at the end, and each middle one is found leftmost after the one before
// (leftmost is right: nothing after a '%' depends on where its match starts). A middle segment
// of literal characters is found by Knuth-Morris-Pratt, O(text + segment); one with '_' by
// bit-parallel shift-and, O(text * ceil(segment / 64)). Each character of the text is read a
// bounded number of times per segment scan and the scans do not overlap, so a match costs
// O(text * ceil(longest segment / 64) + pattern), against O(text * pattern) for backtracking.
struct LikePattern {
  enum class Shape : std::uint8_t {
    exact,     // 'abc'
    prefix,    // 'abc%'
    suffix,    // '%abc'
    contains,  // '%abc%'
    general,   // anything with '_' or an inner '%'
  };
  // A character as a number: its 1 to 4 bytes, big-endian. Lengths do not collide (a 2-byte
  // character's lead byte is >= 0xc0), and no character is kAnyChar.
  static constexpr std::uint32_t kAnyChar = 0xffffffff;  // '_'

  // The characters between two '%' (or an end of the pattern), with what a search needs.
  struct Segment {
    std::vector<std::uint32_t> chars;    // one per character; kAnyChar for '_'
    bool has_any_char = false;
    std::vector<std::uint32_t> failure;  // middle, no '_': KMP failure function
    // middle with '_': shift-and over `words` 64-bit words; keys: the distinct literal
    // characters, sorted. One word: masks[k] per key, then masks[keys.size()] for any other
    // character. More words: masks is the '_' mask (`words` words) and key k adds the bits
    // key_bits[key_first[k], key_first[k + 1]), so the tables grow with the segment, not with
    // keys x words (a hostile pattern must not cost megabytes per subscription).
    struct WordBits {
      std::uint32_t word = 0;
      std::uint64_t bits = 0;
    };
    std::uint32_t words = 0;
    std::vector<std::uint32_t> keys;
    std::vector<std::uint64_t> masks;
    std::vector<std::uint32_t> key_first;
    std::vector<WordBits> key_bits;
  };

  Shape shape = Shape::general;
  std::string literal;               // exact/prefix/suffix/contains: the fixed text
  std::vector<std::uint32_t> failure;  // contains, long literal: KMP failure function over bytes
  std::vector<Segment> segments;     // general: the pattern split at '%' (one segment: no '%')
  std::string source;                // as written, for to_text()
  std::optional<std::string> escape;
};

// One element of a LIKE pattern once escapes are resolved: literal text (one or more
// characters), '_' or '%'.
struct LikeUnit {
  enum class Kind : std::uint8_t { literal, one, any };
  Kind kind = Kind::literal;
  std::string_view text;  // literal only
};

// The longest run of characters between two '%' a LIKE pattern may have (the matcher's scratch
// is sized for it). The selector text limit is normally far below.
inline constexpr std::size_t kMaxLikeSegmentChars = 64 * 1024;

// Compiles pattern elements into a LikePattern; with `shapes` false it always builds the general
// matcher (the fuzz target compares the two). Does not set source or escape.
LikePattern build_like(const std::vector<LikeUnit>& units, bool shapes = true);

// A compiled selector: a flat tree, children before parents, identifiers already resolved to a
// header field or a property name. Immutable after parsing.
struct Tree {
  std::vector<Node> nodes;
  std::vector<std::uint32_t> child_ids;
  std::vector<std::string> strings;           // string literals and property names
  std::vector<std::vector<std::string>> sets; // IN lists, sorted, without repeats
  std::vector<LikePattern> patterns;
  std::uint32_t root = 0;

  const Node& child(const Node& node, std::uint32_t k) const {
    return nodes[child_ids[node.first_child + k]];
  }
};

// Limits on what a subscriber may send. Depth counts tree levels, and parentheses and unary
// operators while parsing; parsing recurses, so keep it in the hundreds.
struct Limits {
  std::size_t max_length = 64 * 1024;
  std::size_t max_depth = 100;
};

// Parses and type-checks a selector. Errors: invalid_argument for bad syntax or an operand of
// the wrong static type (NOT 5, 'a' + 1, 'a' < 'b', JMSPriority LIKE 'x'), limit_exceeded for
// the limits; the detail is "selector: <what> at position <N>" with N a 0-based byte offset.
Result<Tree> parse_tree(std::string_view text, const Limits& limits);

// Canonical text with every compound operand parenthesised; parses back to the same tree (with
// generous limits: it has more parentheses than the original). For tests, logs and the fuzzer.
std::string to_text(const Tree& tree);

}  // namespace carrier::selector
