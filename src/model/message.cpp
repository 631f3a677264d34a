#include "model/message.hpp"

#include "model/queue_key.hpp"

namespace carrier::model {

std::string Destination::key() const { return QueueKey::format(QueueKey::kind_of(kind), name); }

std::string Destination::uri() const {
  switch (kind) {
    case DestinationKind::queue: return "/queue/" + name;
    case DestinationKind::topic: return "/topic/" + name;
    case DestinationKind::temp_queue: return "/temp-queue/" + name;
  }
  return name;
}

std::optional<Destination> Destination::from_key(std::string_view key) {
  // Not QueueKey::parse: a "queue:$scheduled-topic:" key is a queue destination here.
  for (auto kind : {DestinationKind::queue, DestinationKind::topic, DestinationKind::temp_queue}) {
    const std::string_view prefix = QueueKey::prefix(QueueKey::kind_of(kind));
    if (key.starts_with(prefix)) return Destination{kind, std::string(key.substr(prefix.size()))};
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

}  // namespace carrier::model
