#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/broker_types.hpp"
#include "core/home_subscriptions.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class OwnedQueues;
class RetainedMessages;
class TopicRouting;

// A named subscription as each shard keeps it: the definition, the store record holding a
// durable one, and what its matching needs.
struct NamedEntry {
  NamedSubscription def;
  model::MessageId definition_id;  // the store record holding a durable definition
  std::shared_ptr<const selector::Selector> selector;
  std::uint64_t no_local_origin = 0;
};

// Named topic subscriptions (durable, shared, or both): every shard's replica of every
// definition (matched into by the topic index, listed by prefix), durable definitions kept as
// messages in the reserved queue `$subscriptions`, and the subscription's queue on the shard that
// owns its "subscription:" key (an OwnedQueues queue). Consumers attaching to one name compete
// for its messages. Changes go to the store first, then to every shard by broadcast.
// Holders (shared subscriptions kept stored by some members) are SharedSubscriptions'.
// Runs on: its shard.
class NamedSubscriptions {
 public:
  NamedSubscriptions(ShardContext& shard, HomeSubscriptions& subscriptions, OwnedQueues& queues, TopicRouting& topics,
                     RetainedMessages& retained)
      : shard_(shard), subscriptions_(subscriptions), queues_(queues), topics_(topics), retained_(retained) {}
  NamedSubscriptions(const NamedSubscriptions&) = delete;
  NamedSubscriptions& operator=(const NamedSubscriptions&) = delete;

  // The queue key and owner of the subscription `name`.
  static std::string queue_key(std::string_view name);
  // The reserved queue holding durable definitions.
  static bool is_definitions_key(std::string_view key);
  // A durable definition read back from the store; nullopt if it is not one.
  static std::optional<NamedEntry> parse_definition(const model::Message& m);

  // Attaches the consumer `ref` (homed here) to the subscription the request names, making or
  // re-making it first if needed.
  ConsumerId subscribe(SubscribeRequest request, ConsumerRef ref, Completion done);
  // The periodic sweep: subscriptions with an idle expiry whose queue this shard owns, without
  // consumers and untouched for that long, are removed.
  void sweep_idle(std::int64_t now_ms);
  // Refused (permission_denied) when `name` exists and belongs to a user other than `user`
  // (SubscribeRequest::owner); this shard's replica answers, so it costs one lookup.
  Status check_owner(const std::string& name, std::string_view user) const;
  // Deletes the subscription and every message waiting in it (durable ones from the store).
  void remove(std::string name, Completion done);
  // Writes `entry`'s definition in place of its previous one (`previous` nil: none), then makes
  // the owner store (or stop storing) its messages, then every shard's replica `entry`.
  void replace(NamedEntry entry, model::MessageId previous, bool was_durable, Completion done);

  // ---- the replica (changed by broadcast, and by recovery before serving)
  void add(NamedEntry entry, std::uint32_t owner);
  void remove_replica(const std::string& name);
  const NamedEntry* find(const std::string& name) const {
    auto it = named_.find(name);
    return it == named_.end() ? nullptr : &it->second;
  }
  // The named subscriptions whose names start with `prefix`.
  std::vector<NamedSubscription> list(std::string_view prefix) const;
  std::size_t size() const { return named_.size(); }

 private:
  model::MessagePtr definition_message(const NamedEntry& entry);
  // On the owner, once no shard matches into it: its queue, messages and definition go.
  void drop_on_owner(const std::string& key, bool durable, model::MessageId definition, Completion finish);

  ShardContext& shard_;
  HomeSubscriptions& subscriptions_;
  OwnedQueues& queues_;
  TopicRouting& topics_;
  RetainedMessages& retained_;
  // Replica: every named subscription. Ordered: a prefix (one MQTT client's) is a range, not a
  // scan of everyone's at each CONNECT.
  std::map<std::string, NamedEntry, std::less<>> named_;
  // The names of those with an idle expiry whose queue is this shard's: what sweep_idle looks at.
  std::set<std::string, std::less<>> expiring_;
};

}  // namespace carrier::core
