// The topic side of Broker: the replicated subscription index, named (durable and shared)
// subscriptions, retained messages and private subscription queues.
#include <algorithm>

#include "core/broker.hpp"
#include "model/queue_key.hpp"
#include "selector/selector.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;
using model::Message;
using model::MessageId;
using model::MessagePtr;
using model::owner_shard;
using model::ShardId;

namespace {

constexpr std::string_view kSubscriptionPrefix = "subscription:";
constexpr std::string_view kRetainedPrefix = "retained:";
const Destination kDefinitions{DestinationKind::queue, "$subscriptions"};

// Counts a broadcast's completions on the home shard; the last one reports.
struct Countdown {
  std::size_t remaining;
  Completion done;
};

}  // namespace

bool Broker::selected(const TopicSubscriber& s, const Message& m) const {
  if (s.no_local_origin != 0 && s.no_local_origin == m.origin) return false;
  if (s.selector && !selector::matches(*s.selector, m)) return false;
  return true;
}

void Broker::broadcast(std::function<void(Broker&)> fn, Completion done) {
  auto count = std::make_shared<Countdown>(Countdown{peers_.size(), std::move(done)});
  const ShardId home = self_;
  for (auto* peer : peers_) {
    auto step = [peer, fn, count, home]() {
      fn(*peer);
      // Counted on the home shard only: the countdown is not shared across threads.
      auto finish = [count]() {
        if (--count->remaining == 0 && count->done) count->done(ok());
      };
      if (peer->self_ == home) {
        finish();
      } else {
        peer->executor_.post(home, finish);
      }
    };
    if (peer == this) {
      step();
    } else {
      executor_.post(peer->self_, step);
    }
  }
}

void Broker::index_add(std::string filter, TopicSubscriber subscriber) { topic_index_.add(filter, std::move(subscriber)); }

void Broker::index_remove(std::string filter, ConsumerId id) { (void)topic_index_.remove(filter, id); }

void Broker::named_add(NamedEntry entry, std::uint32_t owner) {
  const std::string key = std::string(kSubscriptionPrefix) + entry.def.name;
  TopicSubscriber sub{ConsumerId(0), ShardId(owner), key, entry.def.durable, entry.selector, entry.no_local_origin};
  topic_index_.add(entry.def.filter, std::move(sub));
  if (owner == self_.value()) {
    auto& oq = owned(key);
    oq.stored = entry.def.durable;
    oq.durable = entry.def.durable;
    oq.subscription_name = entry.def.name;
  }
  named_[entry.def.name] = std::move(entry);
}

void Broker::named_remove(const std::string& name) {
  auto it = named_.find(name);
  if (it == named_.end()) return;
  (void)topic_index_.remove_named(it->second.def.filter, std::string(kSubscriptionPrefix) + name);
  named_.erase(it);
}

std::vector<NamedSubscription> Broker::named_subscriptions(std::string_view prefix) const {
  std::vector<NamedSubscription> out;
  for (auto it = named_.lower_bound(prefix); it != named_.end() && it->first.starts_with(prefix); ++it) {
    out.push_back(it->second.def);
  }
  return out;
}

Result<ConsumerId> Broker::subscribe_named(SubscribeRequest request, ConsumerRef ref, Completion done) {
  const std::string name = request.subscription_name;
  const std::string key = std::string(kSubscriptionPrefix) + name;
  const ShardId owner = owner_shard(key, peers_.size());
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
      complete_on(self_, std::move(done), std::move(st));
      return;
    }
    if (!subscriptions_.contains(ref.id)) {
      // Unsubscribed while the subscription was being made (its connection closed before the
      // SUBACK / RECEIPT): its removal has reached the owner already, so attaching now would
      // leave a consumer nobody removes, holding the messages a resumed session waits for.
      // The owner still ends a non-durable one left without consumers.
      post_to(owner, [key, id = ref.id](Broker& b) { b.owner_remove_consumer(key, id, nullptr); });
      complete_on(self_, std::move(done), ok());
      return;
    }
    auto reply = [this, done = std::move(done)](Status s) mutable { complete_on(self_, std::move(done), std::move(s)); };
    post_to(owner, [key, ref = std::move(ref), reply = std::move(reply)](Broker& b) mutable {
      b.owner_add_consumer(key, std::move(ref), std::move(reply));
    });
    if (want_retained) send_retained(filter, TopicSubscriber{ConsumerId(0), owner, key, durable, nullptr, 0});
  };

  if (!request.holder.empty()) {
    // Holder changes are decided on the owner, one at a time.
    auto reply = [this, attach = std::move(attach)](Status st) mutable {
      complete_on(self_, std::move(attach), std::move(st));
    };
    post_to(owner, [request = std::move(request), reply = std::move(reply)](Broker& b) mutable {
      b.owner_add_holder(std::move(request), std::move(reply));
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
  entry.definition_id = next_message_id();
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
      broadcast([entry, owner](Broker& b) { b.named_add(entry, owner.value()); }, std::move(attach));
    };
    if (!entry.def.durable) {
      publish_definition(ok());
      return;
    }
    // The definition is a message in a reserved queue: the store needs no extra record kind,
    // and removing the subscription is an ack of it.
    store_.append({store::Record::added(kDefinitions.key(), definition_message(entry))},
                  [this, publish_definition = std::move(publish_definition)](Status s) mutable {
                    executor_.post(self_, [publish_definition = std::move(publish_definition), s = std::move(s)]() mutable {
                      publish_definition(std::move(s));
                    });
                  });
  };
  if (existing != named_.end()) {
    // A durable subscription re-made with another topic or selector starts over (JMS).
    remove_subscription(name, std::move(create));
  } else {
    create(ok());
  }
  return id;
}

MessagePtr Broker::definition_message(const NamedEntry& entry) {
  // The definition is a message in a reserved queue: the store needs no extra record kind,
  // and removing the subscription is an ack of it.
  auto def = std::make_shared<Message>();
  def->id = entry.definition_id;
  def->destination = kDefinitions;
  def->persistent = true;
  def->timestamp_ms = now_ms();
  def->properties = {{"name", entry.def.name}, {"filter", entry.def.filter}, {"selector", entry.def.selector}};
  for (const auto& h : entry.def.holders) def->properties.emplace_back("holder", h);
  return def;
}

void Broker::holder_op(const std::string& name, std::function<void(Completion next)> op) {
  auto& ops = holder_ops_[name];
  ops.push_back(std::move(op));
  if (ops.size() == 1) run_holder_op(name);
}

void Broker::run_holder_op(const std::string& name) {
  auto it = holder_ops_.find(name);
  if (it == holder_ops_.end() || it->second.empty()) return;
  auto op = it->second.front();
  op([this, name](Status) {
    auto it = holder_ops_.find(name);
    if (it == holder_ops_.end()) return;
    it->second.pop_front();
    if (it->second.empty()) {
      holder_ops_.erase(it);
    } else {
      run_holder_op(name);
    }
  });
}

void Broker::owner_add_holder(SubscribeRequest request, Completion reply) {
  const std::string name = request.subscription_name;
  holder_op(name, [this, request = std::move(request), reply = std::move(reply)](Completion next) mutable {
    const std::string& name = request.subscription_name;
    auto existing = named_.find(name);
    auto finish = [next, reply](Status st) mutable {
      next(st);
      if (reply) reply(std::move(st));
    };
    NamedEntry entry;
    MessageId previous;
    bool was_durable = false;
    if (existing != named_.end()) {
      auto& holders = existing->second.def.holders;
      if (std::binary_search(holders.begin(), holders.end(), request.holder) ||
          existing->second.def.filter != request.destination.name) {
        finish(ok());
        return;
      }
      entry = existing->second;
      was_durable = entry.def.durable;
      if (was_durable) previous = entry.definition_id;
    } else {
      entry.def = NamedSubscription{name, request.destination.name, true, request.selector_text, {}};
      entry.selector = request.selector;
      entry.no_local_origin = request.no_local_origin;
    }
    auto& holders = entry.def.holders;
    holders.insert(std::lower_bound(holders.begin(), holders.end(), request.holder), request.holder);
    entry.def.durable = true;
    entry.definition_id = next_message_id();
    named_replace(std::move(entry), previous, was_durable, std::move(finish));
  });
}

void Broker::release_holder(std::string name, std::string holder, Completion done) {
  const ShardId owner = owner_shard(std::string(kSubscriptionPrefix) + name, peers_.size());
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  post_to(owner, [name = std::move(name), holder = std::move(holder), reply = std::move(reply)](Broker& b) mutable {
    b.owner_remove_holder(std::move(name), std::move(holder), std::move(reply));
  });
}

void Broker::owner_remove_holder(std::string name, std::string holder, Completion reply) {
  holder_op(name, [this, name, holder = std::move(holder), reply = std::move(reply)](Completion next) mutable {
    auto finish = [next, reply](Status st) mutable {
      next(st);
      if (reply) reply(std::move(st));
    };
    auto existing = named_.find(name);
    if (existing == named_.end()) {
      finish(ok());
      return;
    }
    auto& current = existing->second.def.holders;
    auto at = std::lower_bound(current.begin(), current.end(), holder);
    if (at == current.end() || *at != holder) {
      finish(ok());
      return;
    }
    NamedEntry entry = existing->second;
    const MessageId previous = entry.def.durable ? entry.definition_id : MessageId{};
    entry.def.holders.erase(entry.def.holders.begin() + (at - current.begin()));
    if (entry.def.holders.empty()) {
      auto q = queues_.find(std::string(kSubscriptionPrefix) + name);
      if (q == queues_.end() || q->second.queue->consumer_count() == 0) {
        // The last holder gone and nobody attached: the group ends, with its messages.
        remove_subscription(name, std::move(finish));
        return;
      }
      // Consumers without a holder remain: the group goes on, no longer stored, until they leave.
      entry.def.durable = false;
      entry.definition_id = MessageId{};
    } else {
      entry.definition_id = next_message_id();
    }
    named_replace(std::move(entry), previous, true, std::move(finish));
  });
}

void Broker::owner_set_durable(const std::string& key, bool durable, store::Batch& batch) {
  auto it = queues_.find(key);
  if (it == queues_.end()) return;
  auto& oq = it->second;
  oq.durable = durable;
  if (oq.stored == durable) return;
  // The messages it holds enter (or leave) the store with it.
  oq.queue->for_each([&](const Queue::Entry& e) {
    if (!e.message->persistent) return;
    batch.push_back(durable ? store::Record::added(key, e.message) : store::Record::acked(key, e.message->id));
  });
  oq.stored = durable;
}

void Broker::named_replace(NamedEntry entry, MessageId previous, bool was_durable, Completion done) {
  const std::string key = std::string(kSubscriptionPrefix) + entry.def.name;
  const ShardId owner = owner_shard(key, peers_.size());
  store::Batch batch;
  if (entry.def.durable) batch.push_back(store::Record::added(kDefinitions.key(), definition_message(entry)));
  if (!previous.is_nil()) batch.push_back(store::Record::acked(kDefinitions.key(), previous));
  const bool durable = entry.def.durable;
  auto publish = [this, entry = std::move(entry), owner, done = std::move(done)](Status st) mutable {
    if (!st) {
      if (done) done(std::move(st));
      return;
    }
    broadcast(
        [entry, owner](Broker& b) {
          b.named_remove(entry.def.name);
          b.named_add(entry, owner.value());
        },
        std::move(done));
  };
  auto after_definition = [this, key, owner, durable, was_durable, publish = std::move(publish)](Status st) mutable {
    if (!st || durable == was_durable) {
      publish(std::move(st));
      return;
    }
    const ShardId home = self_;
    post_to(owner, [key, durable, home, publish = std::move(publish)](Broker& b) mutable {
      store::Batch moved;
      b.owner_set_durable(key, durable, moved);
      if (!moved.empty()) b.store_.append(std::move(moved), [](Status) {});
      b.post_to(home, [publish = std::move(publish)](Broker&) mutable { publish(ok()); });
    });
  };
  if (batch.empty()) {
    after_definition(ok());
    return;
  }
  store_.append(std::move(batch), [this, after_definition = std::move(after_definition)](Status st) mutable {
    executor_.post(self_, [after_definition = std::move(after_definition), st = std::move(st)]() mutable {
      after_definition(std::move(st));
    });
  });
}

void Broker::remove_subscription(std::string name, Completion done) {
  auto it = named_.find(name);
  if (it == named_.end()) {
    complete_on(self_, std::move(done), unexpected(Errc::not_found, "no subscription named '" + name + "'"));
    return;
  }
  const std::string key = std::string(kSubscriptionPrefix) + name;
  const ShardId owner = owner_shard(key, peers_.size());
  const bool durable = it->second.def.durable;
  const MessageId definition = it->second.definition_id;
  const ShardId home = self_;
  auto finish = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  // Everyone stops matching into it first; then the owner drops its queue and the store records.
  broadcast([name](Broker& b) { b.named_remove(name); },
            [this, key, owner, durable, definition, home, finish = std::move(finish)](Status) mutable {
              post_to(owner, [key, durable, definition, finish = std::move(finish)](Broker& b) mutable {
                auto it = b.queues_.find(key);
                std::vector<MessagePtr> gone;
                bool stored = durable;
                if (it != b.queues_.end()) {
                  for (auto& e : it->second.queue->take_all()) gone.push_back(std::move(e.message));
                  stored = it->second.stored;
                  b.drop_queue(it);
                }
                store::Batch batch;
                b.release(key, stored, gone, batch);
                if (durable) batch.push_back(store::Record::acked(kDefinitions.key(), definition));
                if (batch.empty()) {
                  finish(ok());
                  return;
                }
                b.store_.append(std::move(batch), [finish = std::move(finish)](Status st) mutable { finish(std::move(st)); });
              });
            });
}

void Broker::topic_enqueue(std::vector<std::pair<ConsumerId, MessagePtr>> deliveries) {
  std::vector<Queue*> dirty;
  std::vector<std::pair<ConsumerId, std::string>> over;  // (subscription, topic) past the bound
  const Message* last = nullptr;
  const DestinationPolicy* policy = nullptr;
  const std::uint64_t bound = options_.backlog_bound();
  const bool dropping = bound != 0 && options_.subscriber_backlog_overflow == OverflowPolicy::drop_oldest;
  const bool blocking = bound != 0 && !dropping && pressure_ != nullptr;
  for (auto& [id, m] : deliveries) {
    auto it = topic_subscriptions_.find(id);
    if (it == topic_subscriptions_.end()) continue;  // unsubscribed while the message was on its way
    Queue* q = it->second.queue.get();
    if (m.get() != last) {
      last = m.get();
      policy = &policy_for(m->destination);
    }
    bool bounded = false;
    if (policy->max_messages != 0 || policy->max_bytes != 0) {
      // A plain subscription cannot refuse a publish that others take: with `reject` this
      // subscriber misses the new message, with `drop-oldest` its oldest waiting one.
      if (!fits_private(*q, *policy, *m)) continue;
    } else if (dropping) {
      trim_backlog(*q, *m);
    } else {
      bounded = blocking;
    }
    account_hold(*m);
    const std::string& topic = m->destination.name;
    // Taken even past the bound: the topic's producers pause at their next SEND instead. Noted
    // once per topic while over (a producer the mark has not reached yet keeps sending).
    if (bounded && q->ready_bytes() + m->footprint() > bound && !it->second.pressing.contains(topic) &&
        (over.empty() || over.back().first != id || over.back().second != topic)) {
      over.emplace_back(id, topic);
    }
    q->enqueue(std::move(m));
    if (dirty.empty() || dirty.back() != q) dirty.push_back(q);
  }
  for (auto* q : dirty) dispatch(q->key(), *q, false);
  // Still over once its consumer took what it could: hold back those topics' producers.
  for (auto& [id, topic] : over) {
    auto it = topic_subscriptions_.find(id);  // a delivery may have ended it
    if (it != topic_subscriptions_.end() && it->second.queue->ready_bytes() > bound) press_backlog(it->second, topic);
  }
}

void Broker::trim_backlog(Queue& q, const Message& m) {
  while (q.ready_bytes() + m.footprint() > options_.backlog_bound()) {
    Queue::Entry oldest;
    if (!q.take_oldest(oldest)) return;
    account_release(*oldest.message);
    ++backlog_dropped_;
  }
}

void Broker::press_backlog(TopicSubscription& sub, const std::string& topic) {
  // Once per topic and subscription (a wildcard one marks each topic it keeps receiving).
  if (!sub.pressing.insert(topic).second) return;
  pressure_->block(Destination{DestinationKind::topic, topic}.key());
}

void Broker::relieve_backlog(TopicSubscription& sub, bool all) {
  if (sub.pressing.empty()) return;
  const std::uint64_t bound = options_.backlog_bound();
  if (!all && sub.queue->ready_bytes() * 10 >= bound * 9) return;  // hysteresis: not at every ack
  std::vector<std::string> keys;
  keys.reserve(sub.pressing.size());
  for (const auto& name : sub.pressing) keys.push_back(Destination{DestinationKind::topic, name}.key());
  sub.pressing.clear();
  pressure_->clear_all(keys);
}

bool Broker::fits_private(Queue& q, const DestinationPolicy& policy, const Message& m) {
  auto full = [&]() {
    return (policy.max_messages != 0 && q.depth() + q.unacked() >= policy.max_messages) ||
           (policy.max_bytes != 0 && q.ready_bytes() + m.footprint() > policy.max_bytes);
  };
  while (full()) {
    Queue::Entry oldest;
    if (policy.overflow != OverflowPolicy::drop_oldest || !q.take_oldest(oldest)) return false;
    account_release(*oldest.message);
  }
  return true;
}

void Broker::retain(MessagePtr message) {
  const std::string key = std::string(kRetainedPrefix) + message->destination.name;
  post_to(owner_shard(key, peers_.size()), [key, message = std::move(message)](Broker& b) {
    store::Batch batch;
    const std::string topic = key.substr(kRetainedPrefix.size());
    auto it = b.retained_.find(topic);
    if (it != b.retained_.end()) {
      batch.push_back(store::Record::acked(key, it->second->id));
      b.account_release(*it->second);
      b.retained_.erase(it);
    }
    // An empty retained payload only clears (MQTT).
    if (message->body_size() != 0) {
      auto copy = std::make_shared<Message>(*message);
      copy->from_retained = true;
      copy->origin = 0;
      batch.push_back(store::Record::added(key, copy));
      b.account_hold(*copy);
      b.retained_.emplace(topic, std::move(copy));
    }
    if (!batch.empty()) b.store_.append(std::move(batch), [](Status) {});
  });
}

void Broker::send_retained(std::string filter, TopicSubscriber target) {
  for (std::size_t s = 0; s < peers_.size(); ++s) {
    post_to(ShardId(static_cast<std::uint32_t>(s)), [filter, target](Broker& b) {
      std::vector<Routed> to_queue;
      std::vector<std::pair<ConsumerId, MessagePtr>> to_private;
      for (const auto& [topic, m] : b.retained_) {
        if (!DestinationTree::filter_matches(filter, topic)) continue;
        if (target.queue_key.empty()) {
          to_private.emplace_back(target.id, m);
        } else {
          to_queue.push_back(Routed{target.queue_key, m});
        }
      }
      if (!to_private.empty()) {
        b.post_to(target.home, [batch = std::move(to_private)](Broker& h) mutable { h.topic_enqueue(std::move(batch)); });
      }
      if (!to_queue.empty()) {
        b.post_to(target.home, [batch = std::move(to_queue)](Broker& o) mutable { o.owner_enqueue(std::move(batch), nullptr); });
      }
    });
  }
}

}  // namespace carrier::core
