#include "model/queue_key.hpp"

#include "model/message.hpp"

namespace carrier::model {

namespace {

// FNV-1a, streamed so a QueueKey hashes its prefix and name without joining them.
constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

ShardId shard_of(std::uint64_t hash, std::size_t shard_count) {
  return ShardId(static_cast<std::uint32_t>(hash % (shard_count == 0 ? 1 : shard_count)));
}

// Longest prefix first: "queue:$scheduled-topic:" lies inside "queue:".
constexpr QueueKind kParseOrder[] = {QueueKind::scheduled_topic, QueueKind::queue,        QueueKind::temp_queue,
                                     QueueKind::topic,           QueueKind::subscription, QueueKind::retained,
                                     QueueKind::client};

}  // namespace

std::string_view QueueKey::prefix(Kind kind) {
  switch (kind) {
    case Kind::queue: return "queue:";
    case Kind::temp_queue: return "temp-queue:";
    case Kind::topic: return "topic:";
    case Kind::subscription: return "subscription:";
    case Kind::retained: return "retained:";
    case Kind::client: return "client:";
    case Kind::scheduled_topic: return "queue:$scheduled-topic:";
  }
  return {};
}

std::string QueueKey::format(Kind kind, std::string_view name) {
  const std::string_view p = prefix(kind);
  std::string out;
  out.reserve(p.size() + name.size());
  out.append(p);
  out.append(name);
  return out;
}

QueueKind QueueKey::kind_of(DestinationKind kind) {
  switch (kind) {
    case DestinationKind::queue: return Kind::queue;
    case DestinationKind::temp_queue: return Kind::temp_queue;
    case DestinationKind::topic: return Kind::topic;
  }
  return Kind::queue;
}

QueueKey QueueKey::of(const Destination& destination) { return {kind_of(destination.kind), destination.name}; }

std::optional<QueueKey> QueueKey::parse(std::string_view key) {
  for (Kind kind : kParseOrder) {
    const std::string_view p = prefix(kind);
    if (key.starts_with(p)) return QueueKey(kind, std::string(key.substr(p.size())));
  }
  return std::nullopt;
}

ShardId QueueKey::owner_shard(std::size_t shard_count) const {
  return shard_of(fnv1a(fnv1a(kFnvOffset, prefix(kind_)), name_), shard_count);
}

ShardId owner_shard(std::string_view key, std::size_t shard_count) {
  return shard_of(fnv1a(kFnvOffset, key), shard_count);
}

}  // namespace carrier::model
