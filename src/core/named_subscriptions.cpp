#include "core/named_subscriptions.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/broker.hpp"
#include "core/owned_queues.hpp"
#include "core/retained_messages.hpp"
#include "core/topic_routing.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::ShardId;

namespace {

// Durable definitions are messages in this reserved queue.
const Destination kDefinitions{DestinationKind::queue, "$subscriptions"};

}  // namespace

std::string NamedSubscriptions::queue_key(std::string_view name) {
  return model::QueueKey::format(model::QueueKind::subscription, name);
}

bool NamedSubscriptions::is_definitions_key(std::string_view key) {
  static const std::string definitions = kDefinitions.key();
  return key == definitions;
}

std::optional<NamedEntry> NamedSubscriptions::parse_definition(const Message& m) {
  NamedEntry entry;
  for (const auto& [k, v] : m.properties) {
    if (k == "name") entry.def.name = v;
    if (k == "filter") entry.def.filter = v;
    if (k == "selector") entry.def.selector = v;
    if (k == "holder") entry.def.holders.push_back(v);
    if (k == "idle_expiry_ms") entry.def.idle_expiry_ms = std::strtoull(v.c_str(), nullptr, 10);
    if (k == "owner") entry.def.owner = v;
  }
  std::sort(entry.def.holders.begin(), entry.def.holders.end());
  entry.def.durable = true;
  entry.definition_id = m.id;
  if (entry.def.name.empty() || entry.def.filter.empty()) return std::nullopt;
  return entry;
}

void NamedSubscriptions::add(NamedEntry entry, std::uint32_t owner) {
  const std::string key = queue_key(entry.def.name);
  TopicSubscriber sub{ConsumerId(0), ShardId(owner), key, entry.def.durable, entry.selector, entry.no_local_origin};
  topics_.index_add(entry.def.filter, std::move(sub));
  if (owner == shard_.self.value()) {
    auto& oq = queues_.open(key);
    oq.stored = entry.def.durable;
    oq.durable = entry.def.durable;
    oq.subscription_name = entry.def.name;
    if (entry.def.idle_expiry_ms != 0) expiring_.insert(entry.def.name);
  }
  named_[entry.def.name] = std::move(entry);
}

void NamedSubscriptions::remove_replica(const std::string& name) {
  auto it = named_.find(name);
  if (it == named_.end()) return;
  topics_.index_remove_named(it->second.def.filter, queue_key(name));
  named_.erase(it);
  expiring_.erase(name);
}

std::vector<NamedSubscription> NamedSubscriptions::list(std::string_view prefix) const {
  std::vector<NamedSubscription> out;
  for (auto it = named_.lower_bound(prefix); it != named_.end() && it->first.starts_with(prefix); ++it) {
    out.push_back(it->second.def);
  }
  return out;
}

Status NamedSubscriptions::check_owner(const std::string& name, std::string_view user) const {
  auto it = named_.find(name);
  if (it == named_.end() || it->second.def.owner.empty() || it->second.def.owner == user) return ok();
  return unexpected(Errc::permission_denied, fmt::format("subscription '{}' belongs to another user", name));
}

ConsumerId NamedSubscriptions::subscribe(SubscribeRequest request, ConsumerRef ref, Completion done) {
  const std::string name = request.subscription_name;
  const std::string key = queue_key(name);
  const ShardId owner = shard_.owner_of(key);
  const ConsumerId id = ref.id;
  // The selector is applied when messages are matched into the subscription.
  ref.selector = nullptr;

  SubscriptionInfo info;
  info.destination = request.destination;
  info.owner = owner;
  info.queue_key = key;
  info.subscription_name = name;
  subscriptions_.emplace(id, std::move(info));

  const bool want_retained = request.want_retained;
  const std::string filter = request.destination.name;
  auto attach = [this, key, owner, ref = std::move(ref), done = std::move(done), want_retained, filter,
                 durable = request.durable](Status st) mutable {
    if (!st) {
      shard_.complete_on(shard_.self, std::move(done), std::move(st));
      return;
    }
    if (!ref.consumer) {
      // Made, not attached to.
      subscriptions_.erase(ref.id);
      shard_.complete_on(shard_.self, std::move(done), ok());
      return;
    }
    if (!subscriptions_.contains(ref.id)) {
      // Unsubscribed while the subscription was being made (its connection closed before the
      // SUBACK / RECEIPT): its removal has reached the owner already, so attaching now would
      // leave a consumer nobody removes, holding the messages a resumed session waits for.
      // The owner still ends a non-durable one left without consumers.
      shard_.post_to(owner, [key, id = ref.id](Broker& b) { b.owned_queues().remove_consumer(key, id, nullptr); });
      shard_.complete_on(shard_.self, std::move(done), ok());
      return;
    }
    auto reply = [this, done = std::move(done)](Status s) mutable {
      shard_.complete_on(shard_.self, std::move(done), std::move(s));
    };
    shard_.post_to(owner, [key, ref = std::move(ref), reply = std::move(reply)](Broker& b) mutable {
      b.owned_queues().add_consumer(key, std::move(ref), std::move(reply));
    });
    if (want_retained) retained_.send(filter, TopicSubscriber{ConsumerId(0), owner, key, durable, nullptr, 0});
  };

  if (!request.holder.empty()) {
    // Holder changes are decided on the owner, one at a time.
    auto reply = [this, attach = std::move(attach)](Status st) mutable {
      shard_.complete_on(shard_.self, std::move(attach), std::move(st));
    };
    shard_.post_to(owner, [request = std::move(request), reply = std::move(reply)](Broker& b) mutable {
      b.shared_subscriptions().add_holder(std::move(request), std::move(reply));
    });
    return id;
  }
  auto existing = named_.find(name);
  if (existing != named_.end() && !existing->second.def.holders.empty()) {
    // Kept by holders (durable or not is theirs to decide): this consumer just joins.
    attach(ok());
    return id;
  }
  const bool same = existing != named_.end() && existing->second.def.filter == request.destination.name &&
                    existing->second.def.selector == request.selector_text &&
                    existing->second.def.durable == request.durable;
  if (same) {
    attach(ok());
    return id;
  }

  NamedEntry entry;
  entry.def = NamedSubscription{name, request.destination.name, request.durable, request.selector_text};
  entry.def.idle_expiry_ms = request.idle_expiry_ms;
  entry.def.owner = request.owner;
  entry.definition_id = shard_.ids.next();
  entry.selector = request.selector;
  entry.no_local_origin = request.no_local_origin;

  auto create = [this, entry, owner, attach = std::move(attach)](Status st) mutable {
    if (!st) {
      attach(std::move(st));
      return;
    }
    auto publish_definition = [this, entry, owner, attach = std::move(attach)](Status s) mutable {
      if (!s) {
        attach(std::move(s));
        return;
      }
      shard_.broadcast([entry, owner](Broker& b) { b.named().add(entry, owner.value()); },
                       std::move(attach));
    };
    if (!entry.def.durable) {
      publish_definition(ok());
      return;
    }
    shard_.store.append({store::Record::added(kDefinitions.key(), definition_message(entry))},
                        [this, publish_definition = std::move(publish_definition)](Status s) mutable {
                          shard_.executor.post(shard_.self, [publish_definition = std::move(publish_definition),
                                                             s = std::move(s)]() mutable { publish_definition(std::move(s)); });
                        });
  };
  if (existing != named_.end()) {
    // A durable subscription re-made with another topic or selector starts over (JMS).
    remove(name, std::move(create));
  } else {
    create(ok());
  }
  return id;
}

MessagePtr NamedSubscriptions::definition_message(const NamedEntry& entry) {
  // The definition is a message in a reserved queue: the store needs no extra record kind,
  // and removing the subscription is an ack of it.
  auto def = std::make_shared<Message>();
  def->id = entry.definition_id;
  def->destination = kDefinitions;
  def->persistent = true;
  def->timestamp_ms = shard_.now_ms();
  def->properties = {{"name", entry.def.name}, {"filter", entry.def.filter}, {"selector", entry.def.selector}};
  for (const auto& h : entry.def.holders) def->properties.emplace_back("holder", h);
  if (entry.def.idle_expiry_ms != 0) def->properties.emplace_back("idle_expiry_ms", std::to_string(entry.def.idle_expiry_ms));
  // Only when there is one: definitions without an owner stay byte for byte what they were.
  if (!entry.def.owner.empty()) def->properties.emplace_back("owner", entry.def.owner);
  return def;
}

void NamedSubscriptions::replace(NamedEntry entry, MessageId previous, bool was_durable, Completion done) {
  const std::string key = queue_key(entry.def.name);
  const ShardId owner = shard_.owner_of(key);
  store::Batch batch;
  if (entry.def.durable) batch.push_back(store::Record::added(kDefinitions.key(), definition_message(entry)));
  if (!previous.is_nil()) batch.push_back(store::Record::acked(kDefinitions.key(), previous));
  const bool durable = entry.def.durable;
  auto publish = [this, entry = std::move(entry), owner, done = std::move(done)](Status st) mutable {
    if (!st) {
      if (done) done(std::move(st));
      return;
    }
    shard_.broadcast(
        [entry, owner](Broker& b) {
          b.named().remove_replica(entry.def.name);
          b.named().add(entry, owner.value());
        },
        std::move(done));
  };
  auto after_definition = [this, key, owner, durable, was_durable, publish = std::move(publish)](Status st) mutable {
    if (!st || durable == was_durable) {
      publish(std::move(st));
      return;
    }
    const ShardId home = shard_.self;
    shard_.post_to(owner, [key, durable, home, publish = std::move(publish)](Broker& b) mutable {
      Broker* owner_broker = &b;
      auto apply = [owner_broker, key, durable, home, publish = std::move(publish)]() mutable {
        store::Batch moved;
        owner_broker->owned_queues().set_durable(key, durable, moved);
        if (!moved.empty()) owner_broker->context().store.append(std::move(moved), [](Status) {});
        owner_broker->context().post_to(home, [publish = std::move(publish)](Broker&) mutable { publish(ok()); });
      };
      // Leaving the store, its messages must all be in memory: paged ones are read back first.
      if (durable) {
        apply();
      } else {
        b.owned_queues().page_in_all(key, std::move(apply));
      }
    });
  };
  if (batch.empty()) {
    after_definition(ok());
    return;
  }
  shard_.store.append(std::move(batch), [this, after_definition = std::move(after_definition)](Status st) mutable {
    shard_.executor.post(shard_.self, [after_definition = std::move(after_definition), st = std::move(st)]() mutable {
      after_definition(std::move(st));
    });
  });
}

void NamedSubscriptions::sweep_idle(std::int64_t now_ms) {
  std::vector<std::string> idle;
  for (const auto& name : expiring_) {
    const auto& entry = named_.find(name)->second;
    const std::string key = queue_key(name);
    const auto* oq = queues_.find(key);
    // Its queue's last activity: a consumer attaching, acking or being handed a message (a
    // restart counts as activity: the queue is made anew).
    if (oq != nullptr && (oq->queue->consumer_count() != 0 ||
                          now_ms - oq->queue->last_activity_ms() < static_cast<std::int64_t>(entry.def.idle_expiry_ms))) {
      continue;
    }
    idle.push_back(name);
  }
  for (auto& name : idle) remove(std::move(name), nullptr);
}

void NamedSubscriptions::remove(std::string name, Completion done) {
  auto it = named_.find(name);
  if (it == named_.end()) {
    shard_.complete_on(shard_.self, std::move(done), unexpected(Errc::not_found, "no subscription named '" + name + "'"));
    return;
  }
  const std::string key = queue_key(name);
  const ShardId owner = shard_.owner_of(key);
  const bool durable = it->second.def.durable;
  const MessageId definition = it->second.definition_id;
  auto finish = [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
  };
  // Everyone stops matching into it first; then the owner drops its queue and the store records.
  shard_.broadcast([name](Broker& b) { b.named().remove_replica(name); },
                   [this, key, owner, durable, definition, finish = std::move(finish)](Status) mutable {
                     shard_.post_to(owner, [key, durable, definition, finish = std::move(finish)](Broker& b) mutable {
                       b.named().drop_on_owner(key, durable, definition, std::move(finish));
                     });
                   });
}

void NamedSubscriptions::drop_on_owner(const std::string& key, bool durable, MessageId definition, Completion finish) {
  std::vector<Queue::Entry> gone;
  std::vector<Queue::ColdCut> cold;
  bool stored = durable;
  if (auto* oq = queues_.find(key)) {
    cold = oq->queue->cut_cold();
    gone = oq->queue->take_all();
    stored = oq->stored;
  }
  store::Batch batch;
  // Before the drop: release_entries forgets their store locations with the queue.
  queues_.release_entries(key, stored, std::move(gone), batch);
  queues_.drop(key);
  if (durable) batch.push_back(store::Record::acked(kDefinitions.key(), definition));
  if (batch.empty()) {
    finish(ok());
  } else {
    shard_.store.append(std::move(batch), [finish = std::move(finish)](Status st) mutable { finish(std::move(st)); });
  }
  // Its cold tails' messages are acked by scanning them through, after the records above.
  if (stored) queues_.ack_cold(key, std::move(cold));
}

}  // namespace carrier::core
