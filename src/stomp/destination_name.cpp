#include "stomp/destination_name.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace carrier::stomp {

namespace {

// Exchanges live under this topic prefix: `$` keeps them from wildcard filters such as "/topic/>"
// (a filter starting with a wildcard skips `$` names), as RabbitMQ keeps exchanges apart.
constexpr std::string_view kExchangeTopic = "$exchange.";
constexpr std::string_view kFanout = "amq.fanout";
constexpr std::string_view kDirect = "amq.direct";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// A topic binding key as RabbitMQ writes it: `#` (zero or more words) becomes `>` (one or more:
// the nearest Carrier has), allowed only as the last word; `*` means the same in both.
Result<std::string> translate_binding(std::string_view key) {
  std::string out;
  std::string_view rest = key;
  while (true) {
    const auto dot = rest.find('.');
    const auto word = rest.substr(0, dot);
    const bool last = dot == std::string_view::npos;
    if (word == "#") {
      if (!last) {
        return unexpected(Errc::invalid_argument,
                          fmt::format("binding key '{}': '#' is supported only as the last word", key));
      }
      out.push_back('>');
    } else {
      out.append(word);
    }
    if (last) return out;
    out.push_back('.');
    rest.remove_prefix(dot + 1);
  }
}

Result<model::Destination> parse_exchange(std::string_view text, std::string_view rest, bool for_subscribe) {
  using model::DestinationKind;
  const auto slash = rest.find('/');
  const auto exchange = rest.substr(0, slash);
  const auto key = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  if (exchange.empty()) {
    return unexpected(Errc::invalid_argument, fmt::format("destination '{}' names no exchange", text));
  }
  if (exchange == "amq.topic") {
    if (key.empty()) {
      return unexpected(Errc::invalid_argument, fmt::format("destination '{}' has no routing key", text));
    }
    if (!for_subscribe) return model::Destination{DestinationKind::topic, std::string(key)};
    auto filter = translate_binding(key);
    if (!filter) return unexpected(filter.error());
    return model::Destination{DestinationKind::topic, std::move(*filter)};
  }
  if (exchange == kFanout) {
    return model::Destination{DestinationKind::topic, std::string(kExchangeTopic) + std::string(kFanout)};
  }
  if (exchange == kDirect) {
    std::string name = std::string(kExchangeTopic) + std::string(kDirect);
    if (!key.empty()) name.append(".").append(key);  // not "." + string: g++ 12 -O3 -Wrestrict (GCC bug 105329)
    // A direct exchange matches keys exactly; Carrier cannot bind a literal `*` or `>`.
    if (name.find_first_of("*>") != std::string::npos) {
      return unexpected(Errc::invalid_argument,
                        fmt::format("routing key '{}' of amq.direct must not contain '*' or '>'", key));
    }
    return model::Destination{DestinationKind::topic, std::move(name)};
  }
  return unexpected(Errc::not_found, fmt::format("unknown exchange '{}': Carrier has amq.topic, amq.fanout and "
                                                 "amq.direct",
                                                 exchange));
}

}  // namespace

Result<model::Destination> parse_destination(std::string_view text, bool for_subscribe) {
  using model::DestinationKind;
  static constexpr std::array<std::pair<std::string_view, DestinationKind>, 4> kPrefixes{{
      {"/queue/", DestinationKind::queue},
      {"/amq/queue/", DestinationKind::queue},
      {"/topic/", DestinationKind::topic},
      {"/temp-queue/", DestinationKind::temp_queue},
  }};
  if (text.empty()) return unexpected(Errc::invalid_argument, "empty destination");
  if (text.front() != '/') return model::Destination{DestinationKind::queue, std::string(text)};
  for (const auto& [prefix, kind] : kPrefixes) {
    if (!starts_with(text, prefix)) continue;
    auto name = text.substr(prefix.size());
    if (name.empty()) return unexpected(Errc::invalid_argument, fmt::format("destination '{}' has no name", text));
    if (kind == DestinationKind::topic) {
      if (starts_with(name, kExchangeTopic)) {
        return unexpected(Errc::invalid_argument, fmt::format("topic names starting with '{}' are reserved: '{}'",
                                                              kExchangeTopic, text));
      }
      // "/topic/" is RabbitMQ's amq.topic: its binding keys' `#` is translated too.
      if (for_subscribe && name.find('#') != std::string_view::npos) {
        auto filter = translate_binding(name);
        if (!filter) return unexpected(filter.error());
        return model::Destination{kind, std::move(*filter)};
      }
    }
    return model::Destination{kind, std::string(name)};
  }
  if (starts_with(text, "/exchange/")) return parse_exchange(text, text.substr(10), for_subscribe);
  for (std::string_view bare : {"/queue", "/amq/queue", "/topic", "/temp-queue", "/exchange"}) {
    if (text == bare) return unexpected(Errc::invalid_argument, fmt::format("destination '{}' has no name", text));
  }
  return unexpected(Errc::invalid_argument,
                    fmt::format("unknown destination prefix in '{}': use /queue/, /topic/, /temp-queue/, /amq/queue/ "
                                "or /exchange/, or a queue name without a leading '/'",
                                text));
}

std::string format_destination(const model::Destination& d) {
  if (d.kind == model::DestinationKind::topic && starts_with(d.name, kExchangeTopic)) {
    auto rest = std::string_view(d.name).substr(kExchangeTopic.size());
    for (std::string_view exchange : {kFanout, kDirect}) {
      if (rest == exchange) return fmt::format("/exchange/{}", exchange);
      if (starts_with(rest, exchange) && rest.size() > exchange.size() && rest[exchange.size()] == '.') {
        return fmt::format("/exchange/{}/{}", exchange, rest.substr(exchange.size() + 1));
      }
    }
  }
  return d.uri();
}

}  // namespace carrier::stomp
