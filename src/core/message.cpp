#include "core/message.hpp"

namespace carrier::core {

namespace {
constexpr std::string_view kQueuePrefix = "queue:";
constexpr std::string_view kTopicPrefix = "topic:";
constexpr std::string_view kTempQueuePrefix = "temp-queue:";
}  // namespace

std::string Destination::key() const {
  std::string_view prefix;
  switch (kind) {
    case DestinationKind::queue: prefix = kQueuePrefix; break;
    case DestinationKind::topic: prefix = kTopicPrefix; break;
    case DestinationKind::temp_queue: prefix = kTempQueuePrefix; break;
  }
  std::string out;
  out.reserve(prefix.size() + name.size());
  out.append(prefix);
  out.append(name);
  return out;
}

std::string Destination::uri() const {
  switch (kind) {
    case DestinationKind::queue: return "/queue/" + name;
    case DestinationKind::topic: return "/topic/" + name;
    case DestinationKind::temp_queue: return "/temp-queue/" + name;
  }
  return name;
}

std::optional<Destination> Destination::from_key(std::string_view key) {
  for (auto [prefix, kind] : {std::pair{kQueuePrefix, DestinationKind::queue},
                              std::pair{kTopicPrefix, DestinationKind::topic},
                              std::pair{kTempQueuePrefix, DestinationKind::temp_queue}}) {
    if (key.substr(0, prefix.size()) == prefix) {
      return Destination{kind, std::string(key.substr(prefix.size()))};
    }
  }
  return std::nullopt;
}

std::size_t Message::footprint() const {
  if (std::size_t cached = footprint_cache.bytes.load(std::memory_order_relaxed); cached != 0) return cached;
  std::size_t n = sizeof(Message) + destination.name.size() + correlation_id.size() + reply_to.size() +
                  type.size() + content_type.size() + body_size();
  for (const auto& [k, v] : properties) n += k.size() + v.size() + 2 * sizeof(std::string);
  footprint_cache.bytes.store(n, std::memory_order_relaxed);
  return n;
}

}  // namespace carrier::core
