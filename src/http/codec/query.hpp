#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace carrier::http::codec {

// A request target split at '?': the path as sent (still percent-encoded) and the raw query.
struct Target {
  std::string_view path;
  std::string_view query;
};
Target split_target(std::string_view target);

// "%2F" -> "/"; '+' is left alone in paths (`plus_is_space` for query strings, as forms send it).
// A malformed escape ("%G1", "%4") is an Errc::invalid_argument.
Result<std::string> percent_decode(std::string_view text, bool plus_is_space = false);

// "a=1&b=x%20y&flag": decoded pairs in order ("flag" has an empty value). At most `max_params`.
using Params = std::vector<std::pair<std::string, std::string>>;
Result<Params> parse_query(std::string_view query, std::size_t max_params = 64);
// The first value of `name`, if present.
std::optional<std::string_view> find_param(const Params& params, std::string_view name);

// The first parameter whose name is not in `allowed` (a typo is refused, not ignored).
std::optional<std::string_view> unknown_param(const Params& params, std::initializer_list<std::string_view> allowed);

// A whole decimal number in [min, max]; `name` is used in the error text.
Result<std::uint64_t> parse_bounded(std::string_view text, std::string_view name, std::uint64_t min, std::uint64_t max);

// A duration: "250ms", "30s", "2m", or a bare number of seconds ("30"), at most `max_ms`.
Result<std::uint64_t> parse_duration_ms(std::string_view text, std::string_view name, std::uint64_t max_ms);

// "true" / "false" (also "1"/"0", "yes"/"no").
Result<bool> parse_flag(std::string_view text, std::string_view name);

}  // namespace carrier::http::codec
