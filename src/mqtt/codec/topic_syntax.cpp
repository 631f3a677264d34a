#include "mqtt/codec/topic_syntax.hpp"

namespace carrier::mqtt::codec {

bool has_wildcard(std::string_view text) noexcept {
  for (char c : text) {
    if (c == '+' || c == '#') return true;
  }
  return false;
}

bool is_valid_topic_name(std::string_view name) noexcept { return !name.empty() && !has_wildcard(name); }

bool is_valid_topic_filter(std::string_view filter) noexcept {
  if (filter.empty()) return false;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = filter.find('/', start);
    const bool last = slash == std::string_view::npos;
    const std::string_view level = filter.substr(start, last ? std::string_view::npos : slash - start);
    if (level.find('#') != std::string_view::npos && (level != "#" || !last)) return false;
    if (level.find('+') != std::string_view::npos && level != "+") return false;
    if (last) return true;
    start = slash + 1;
  }
}

std::optional<SharedFilter> parse_shared_filter(std::string_view filter) noexcept {
  if (!is_shared_filter(filter)) return std::nullopt;
  std::string_view rest = filter.substr(7);
  const std::size_t slash = rest.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  SharedFilter out{rest.substr(0, slash), rest.substr(slash + 1)};
  if (has_wildcard(out.group)) return std::nullopt;
  if (!is_valid_topic_filter(out.filter)) return std::nullopt;
  return out;
}

}  // namespace carrier::mqtt::codec
