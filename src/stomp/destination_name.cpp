#include "stomp/destination_name.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace carrier::stomp {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

}  // namespace

Result<core::Destination> parse_destination(std::string_view text, bool for_subscribe) {
  using core::DestinationKind;
  static constexpr std::array<std::pair<std::string_view, DestinationKind>, 4> kPrefixes{{
      {"/queue/", DestinationKind::queue},
      {"/amq/queue/", DestinationKind::queue},
      {"/topic/", DestinationKind::topic},
      {"/temp-queue/", DestinationKind::temp_queue},
  }};
  if (text.empty()) return unexpected(Errc::invalid_argument, "empty destination");
  if (text.front() != '/') return core::Destination{DestinationKind::queue, std::string(text)};
  for (const auto& [prefix, kind] : kPrefixes) {
    if (!starts_with(text, prefix)) continue;
    auto name = text.substr(prefix.size());
    if (name.empty()) return unexpected(Errc::invalid_argument, fmt::format("destination '{}' has no name", text));
    return core::Destination{kind, std::string(name)};
  }
  for (std::string_view bare : {"/queue", "/amq/queue", "/topic", "/temp-queue"}) {
    if (text == bare) return unexpected(Errc::invalid_argument, fmt::format("destination '{}' has no name", text));
  }
  return unexpected(Errc::invalid_argument,
                    fmt::format("unknown destination prefix in '{}': use /queue/, /topic/, /temp-queue/ or "
                                "/amq/queue/, or a queue name without a leading '/'",
                                text));
}

std::string format_destination(const core::Destination& d) { return d.uri(); }

}  // namespace carrier::stomp
