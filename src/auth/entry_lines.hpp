#pragma once

#include <cstddef>
#include <string_view>

namespace carrier::auth {

// The line shape the users file and the tokens file share: one entry a line; blank lines and
// lines starting with `#` skipped; CRLF ends and trailing spaces tolerated. Calls
// `fn(line, line_number)` for each entry line (numbers from 1) until it returns false.
template <class Fn>
void for_each_entry_line(std::string_view text, Fn&& fn) {
  std::size_t line_number = 0;
  while (!text.empty()) {
    ++line_number;
    const auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (!fn(line, line_number)) return;
  }
}

}  // namespace carrier::auth
