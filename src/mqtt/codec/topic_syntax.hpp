#pragma once

#include <optional>
#include <string_view>

namespace carrier::mqtt::codec {

// Topic syntax (section 4.7), on strings already checked as UTF-8.

// Whether `text` holds `+` or `#`. A plain loop: find_first_of with a character set calls memchr
// once per character, which showed on every PUBLISH.
bool has_wildcard(std::string_view text) noexcept;

// A name a PUBLISH may carry: at least one character, no `+` or `#`.
bool is_valid_topic_name(std::string_view name) noexcept;

// A filter a SUBSCRIBE may carry: at least one character; `+` only as a whole level; `#` only as
// the whole last level. `$share/...` filters are checked by parse_shared_filter.
bool is_valid_topic_filter(std::string_view filter) noexcept;

// `$share/{group}/{filter}` (section 4.8.2).
struct SharedFilter {
  std::string_view group;
  std::string_view filter;
};

inline bool is_shared_filter(std::string_view filter) noexcept { return filter.starts_with("$share/"); }

// The group and filter of a shared subscription, or nullopt when the group is empty or holds
// `/`, `+` or `#`, or the filter after it is missing or invalid.
std::optional<SharedFilter> parse_shared_filter(std::string_view filter) noexcept;

}  // namespace carrier::mqtt::codec
