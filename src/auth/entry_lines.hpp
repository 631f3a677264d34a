#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/error.hpp"

namespace carrier::auth {

// The line shape the users file and the tokens file share: one entry a line; blank lines and
// lines starting with `#` skipped; CRLF ends and trailing spaces tolerated. Calls
// `fn(line, line_number, where)` for each entry line (numbers from 1; `where` is
// "SOURCE:LINE"); a detail it returns stops the reading and comes back as an
// Errc::invalid_argument.
template <class Fn>
std::optional<Error> for_each_entry_line(std::string_view text, std::string_view source_name, Fn&& fn) {
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    const std::string where = fmt::format("{}:{}", source_name, line_number);
    if (std::optional<std::string> problem = fn(line, line_number, where)) {
      return Error{Errc::invalid_argument, std::move(*problem)};
    }
  }
  return std::nullopt;
}

}  // namespace carrier::auth
