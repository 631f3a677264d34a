#include "stomp/destination_name.hpp"

#include <array>
#include <utility>

namespace carrier::stomp {

std::optional<core::Destination> parse_destination(std::string_view text) {
  using core::DestinationKind;
  static constexpr std::array<std::pair<std::string_view, DestinationKind>, 4> kPrefixes{{
      {"/queue/", DestinationKind::queue},
      {"/amq/queue/", DestinationKind::queue},
      {"/topic/", DestinationKind::topic},
      {"/temp-queue/", DestinationKind::temp_queue},
  }};
  for (const auto& [prefix, kind] : kPrefixes) {
    if (text.substr(0, prefix.size()) == prefix) {
      auto name = text.substr(prefix.size());
      if (name.empty()) return std::nullopt;
      return core::Destination{kind, std::string(name)};
    }
  }
  if (text.empty() || text == "/") return std::nullopt;
  if (text.front() == '/') text.remove_prefix(1);
  return core::Destination{DestinationKind::queue, std::string(text)};
}

std::string format_destination(const core::Destination& d) { return d.uri(); }

}  // namespace carrier::stomp
