#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/shard_id.hpp"

namespace carrier::model {

struct Destination;
enum class DestinationKind : std::uint8_t;

// What a QueueKey names. Each kind has one prefix in its string form (the store key):
//   queue            "queue:<name>"                   a queue (also reserved `$` queues)
//   temp_queue       "temp-queue:<name>"              a temporary queue
//   topic            "topic:<name>"                   a topic (policies, pressure; not stored)
//   subscription     "subscription:<name>"            a named (durable or shared) subscription
//   retained         "retained:<topic>"               a topic's retained message (MQTT)
//   client           "client:<id>"                    an MQTT client id's registry entry (not stored)
//   scheduled_topic  "queue:$scheduled-topic:<topic>" persistent topic messages not yet due
enum class QueueKind : std::uint8_t { queue, temp_queue, topic, subscription, retained, client, scheduled_topic };

// The key of something a shard owns: a kind and a name, formatted, parsed and hashed to its
// owner shard here and nowhere else, so a misspelt prefix cannot compile. The string form is
// what the store keeps (journal, SQLite, PostgreSQL): it must never change for a kind.
//
//   auto key = QueueKey::subscription("stomp:app:s1");
//   key.str()              -> "subscription:stomp:app:s1"
//   key.owner_shard(n)     -> the shard that owns it (FNV-1a of str(), modulo n)
//   QueueKey::parse(s)     -> the key back from a store key, or nullopt for an unknown prefix
//
// A value type; any thread.
class QueueKey {
 public:
  using Kind = QueueKind;

  QueueKey(Kind kind, std::string name) : kind_(kind), name_(std::move(name)) {}

  static QueueKey queue(std::string name) { return {Kind::queue, std::move(name)}; }
  static QueueKey temp_queue(std::string name) { return {Kind::temp_queue, std::move(name)}; }
  static QueueKey topic(std::string name) { return {Kind::topic, std::move(name)}; }
  static QueueKey subscription(std::string name) { return {Kind::subscription, std::move(name)}; }
  static QueueKey retained(std::string topic) { return {Kind::retained, std::move(topic)}; }
  static QueueKey client(std::string id) { return {Kind::client, std::move(id)}; }
  static QueueKey scheduled_topic(std::string topic) { return {Kind::scheduled_topic, std::move(topic)}; }
  // The key of a destination: queue, temp_queue or topic with its name.
  static QueueKey of(const Destination& destination);
  static Kind kind_of(DestinationKind kind);

  // From a store key. A "queue:$scheduled-topic:" key is a scheduled_topic, the one prefix that
  // is inside another; nullopt when no kind's prefix starts `key`. The name may be empty.
  static std::optional<QueueKey> parse(std::string_view key);

  Kind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  // The store key: prefix(kind()) + name().
  std::string str() const { return format(kind_, name_); }
  ShardId owner_shard(std::size_t shard_count) const;

  // The one place a kind's prefix is spelt; format() builds a key without a QueueKey (the send
  // path's Destination::key() uses it: no extra copy of the name).
  static std::string_view prefix(Kind kind);
  static std::string format(Kind kind, std::string_view name);

  auto operator<=>(const QueueKey&) const = default;

 private:
  Kind kind_;
  std::string name_;
};

// The shard that owns a key already in its string form (e.g. a record read back from the
// store): FNV-1a of the bytes modulo shard_count, stable across runs, builds and restarts for
// the same count. Equal to QueueKey::owner_shard for the same key.
ShardId owner_shard(std::string_view key, std::size_t shard_count);

}  // namespace carrier::model
