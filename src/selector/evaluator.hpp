#pragma once

#include <cstdint>
#include <string_view>

#include "model/message.hpp"
#include "selector/parser.hpp"

namespace carrier::selector {

// SQL's three truth values. A selector matches only on `yes`.
enum class Truth : std::uint8_t { no, yes, unknown };

// Evaluates a compiled tree against a message. Pure: no allocation, no state between calls;
// recursion is bounded by the tree's depth (Limits::max_depth).
Truth evaluate(const Tree& tree, const model::Message& message);

// Whether `text` matches a compiled LIKE pattern (not NULL-aware: the caller handles NULL).
bool like_matches(const LikePattern& pattern, std::string_view text);

}  // namespace carrier::selector
