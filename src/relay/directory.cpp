#include "relay/directory.hpp"

#include <fmt/format.h>

namespace carrier::relay {

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Greedy with one backtrack point (the last '*'): linear in practice, never exponential.
  std::size_t p = 0, t = 0, star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<bool> Directory::add(Entry entry) {
  if (entries_.contains(entry.id)) return false;
  if (entries_.size() >= max_entries_) {
    return unexpected(Errc::limit_exceeded, fmt::format("the relay's directory holds {} pipes and groups, its "
                                                        "maximum (relay.max_directory_entries)",
                                                        max_entries_));
  }
  auto id = entry.id;
  entries_.emplace(std::move(id), std::move(entry));
  return true;
}

std::vector<Directory::Entry> Directory::search(std::string_view type, std::string_view attr, std::string_view pattern,
                                                std::size_t limit) const {
  std::vector<Entry> out;
  for (const auto& [id, e] : entries_) {
    if (out.size() >= limit) break;
    if (e.type != type) continue;
    if (wildcard_match(pattern, attr == "id" ? std::string_view(e.id) : std::string_view(e.name))) out.push_back(e);
  }
  return out;
}

}  // namespace carrier::relay
