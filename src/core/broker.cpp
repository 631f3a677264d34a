#include "core/broker.hpp"

#include <chrono>
#include <map>

namespace carrier::core {

namespace {

std::int64_t system_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool is_queue_kind(DestinationKind k) { return k == DestinationKind::queue || k == DestinationKind::temp_queue; }

// A counter shared by the completions of one fan-out; the last one reports.
struct FanIn {
  std::size_t remaining;
  Status first_error;
  Completion done;
};

}  // namespace

ShardId owner_shard(std::string_view key, std::size_t shard_count) {
  // FNV-1a: stable across runs and builds, unlike std::hash.
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return ShardId(static_cast<std::uint32_t>(h % (shard_count == 0 ? 1 : shard_count)));
}

Broker::Broker(ShardId self, Executor& executor, store::Store& store, Options options, Clock clock)
    : self_(self),
      executor_(executor),
      store_(store),
      options_(std::move(options)),
      clock_(clock ? std::move(clock) : Clock(system_now_ms)),
      ids_(static_cast<std::uint64_t>(system_now_ms()) * 1000003ULL + self.value()),
      configured_queues_(options_.queues.begin(), options_.queues.end()) {}

void Broker::set_peers(std::vector<Broker*> peers) { peers_ = std::move(peers); }

void Broker::complete_on(ShardId shard, Completion done, Status status) {
  if (!done) return;
  if (executor_.current() == shard) {
    done(std::move(status));
    return;
  }
  executor_.post(shard, [done = std::move(done), status = std::move(status)]() mutable { done(std::move(status)); });
}

Status Broker::check_destination(const Destination& d, bool for_subscribe) const {
  if (d.name.empty()) return unexpected(Errc::invalid_argument, "empty destination name");
  if (d.kind == DestinationKind::topic) {
    if (for_subscribe) {
      if (!DestinationTree::is_valid_filter(d.name)) {
        return unexpected(Errc::invalid_argument, "invalid topic filter '" + d.name + "'");
      }
    } else if (DestinationTree::has_wildcards(d.name)) {
      return unexpected(Errc::invalid_argument, "wildcards are only allowed when subscribing: '" + d.name + "'");
    }
    return ok();
  }
  if (DestinationTree::has_wildcards(d.name)) {
    return unexpected(Errc::invalid_argument, "wildcards are not supported on queues: '" + d.name + "'");
  }
  if (!options_.auto_create && d.kind == DestinationKind::queue && !configured_queues_.contains(d.name)) {
    return unexpected(Errc::not_found, "queue '" + d.name + "' does not exist and auto_create is off");
  }
  return ok();
}

// ---------------------------------------------------------------- producer side

void Broker::send(std::vector<MessagePtr> messages, Completion done) {
  store::Batch batch;
  for (const auto& m : messages) {
    if (m->persistent && is_queue_kind(m->destination.kind)) {
      batch.push_back(store::Record::added(m->destination.key(), m));
    }
  }
  // Append before routing: the store's order then puts every message record ahead of any ack
  // record for it, whichever shard writes the ack.
  if (batch.empty()) {
    route(std::move(messages));
    complete_on(self_, std::move(done), ok());
    return;
  }
  store_.append(std::move(batch), [this, done = std::move(done)](Status status) mutable {
    complete_on(self_, std::move(done), std::move(status));
  });
  route(std::move(messages));
}

void Broker::route(std::vector<MessagePtr> messages) {
  const std::size_t n = peers_.size();
  std::vector<std::vector<MessagePtr>> by_owner(n);
  std::vector<MessagePtr> topic_messages;
  for (auto& m : messages) {
    if (m->destination.kind == DestinationKind::topic) {
      topic_messages.push_back(std::move(m));
    } else {
      by_owner[owner_shard(m->destination.key(), n).value()].push_back(std::move(m));
    }
  }
  for (std::size_t s = 0; s < n; ++s) {
    if (by_owner[s].empty()) continue;
    if (s == self_.value()) {
      owner_enqueue(std::move(by_owner[s]));
    } else {
      executor_.post(ShardId(static_cast<std::uint32_t>(s)),
                     [peer = peers_[s], batch = std::move(by_owner[s])]() mutable { peer->owner_enqueue(std::move(batch)); });
    }
  }
  if (!topic_messages.empty()) publish(topic_messages);
}

void Broker::commit(Transaction tx, Completion done) {
  store::Batch batch;
  for (const auto& m : tx.sends) {
    if (m->persistent && is_queue_kind(m->destination.kind)) batch.push_back(store::Record::added(m->destination.key(), m));
  }
  for (const auto& a : tx.acks) {
    auto it = subscriptions_.find(a.consumer);
    if (it == subscriptions_.end() || it->second.topic || !a.message || !a.message->persistent) continue;
    batch.push_back(store::Record::acked(it->second.queue_key, a.message->id));
  }
  auto apply = [this, tx = std::move(tx), done = std::move(done)](Status status) mutable {
    if (!status) {
      done(std::move(status));
      return;
    }
    route(std::move(tx.sends));
    // Group settlements per consumer; the ack records are already in the store.
    std::map<ConsumerId, std::vector<std::uint64_t>> acks, nacks;
    for (auto& a : tx.acks) acks[a.consumer].push_back(a.tag);
    for (auto& a : tx.nacks) nacks[a.consumer].push_back(a.tag);
    for (auto& [id, tags] : acks) {
      auto it = subscriptions_.find(id);
      if (it == subscriptions_.end()) continue;
      if (it->second.topic) {
        ack(id, std::move(tags), nullptr);
      } else {
        executor_.post(it->second.owner, [peer = peers_[it->second.owner.value()], key = it->second.queue_key, id,
                                          tags = std::move(tags)]() mutable {
          peer->owner_settle(std::move(key), id, std::move(tags), true, false, nullptr);
        });
      }
    }
    for (auto& [id, tags] : nacks) nack(id, std::move(tags), nullptr);
    done(ok());
  };
  if (batch.empty()) {
    apply(ok());
    return;
  }
  store_.append(std::move(batch), [this, apply = std::move(apply)](Status status) mutable {
    executor_.post(self_, [apply = std::move(apply), status = std::move(status)]() mutable { apply(std::move(status)); });
  });
}

// ---------------------------------------------------------------- consumer side

Result<ConsumerId> Broker::subscribe(SubscribeRequest request, Completion done) {
  if (auto st = check_destination(request.destination, true); !st) return unexpected(st.error());
  const ConsumerId id((static_cast<std::uint64_t>(self_.value()) << 48) | next_consumer_++);
  ConsumerRef ref{id, self_, std::move(request.consumer), request.ack_mode, request.prefetch};
  if (ref.prefetch == 0) {
    ref.prefetch = request.ack_mode == AckMode::auto_ack ? options_.prefetch_auto : options_.prefetch_client;
  }
  SubscriptionInfo info;
  info.destination = request.destination;
  if (request.destination.kind == DestinationKind::topic) {
    info.topic = true;
    auto queue = std::make_unique<Queue>("subscription:" + request.destination.name);
    queue->add_consumer(std::move(ref));
    topic_subscriptions_.emplace(id, TopicSubscription{request.destination.name, std::move(queue)});
    subscriptions_.emplace(id, std::move(info));
    broadcast([filter = request.destination.name, sub = TopicSubscriber{id, self_}](Broker& b) {
      b.index_add(filter, sub);
    }, std::move(done));
    return id;
  }
  info.queue_key = request.destination.key();
  info.owner = owner_shard(info.queue_key, peers_.size());
  const auto owner = info.owner;
  auto key = info.queue_key;
  subscriptions_.emplace(id, std::move(info));
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  // Posted even when this shard owns the queue: the caller learns the consumer id before the
  // first delivery can reach it.
  executor_.post(owner, [peer = peers_[owner.value()], key = std::move(key), ref = std::move(ref),
                         reply = std::move(reply)]() mutable {
    peer->owner_add_consumer(std::move(key), std::move(ref), std::move(reply));
  });
  return id;
}

void Broker::unsubscribe(ConsumerId id, Completion done) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    complete_on(self_, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  SubscriptionInfo info = std::move(it->second);
  subscriptions_.erase(it);
  if (info.topic) {
    auto sub = topic_subscriptions_.find(id);
    std::string filter = sub->second.filter;
    topic_subscriptions_.erase(sub);
    broadcast([filter, id](Broker& b) { b.index_remove(filter, id); }, std::move(done));
    return;
  }
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  if (info.owner == self_) {
    owner_remove_consumer(std::move(info.queue_key), id, std::move(reply));
  } else {
    executor_.post(info.owner, [peer = peers_[info.owner.value()], key = std::move(info.queue_key), id,
                                reply = std::move(reply)]() mutable {
      peer->owner_remove_consumer(std::move(key), id, std::move(reply));
    });
  }
}

void Broker::ack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    complete_on(self_, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  if (it->second.topic) {
    auto& sub = topic_subscriptions_.at(id);
    (void)sub.queue->ack(id, tags);
    dispatch(*sub.queue, false);
    complete_on(self_, std::move(done), ok());
    return;
  }
  const auto owner = it->second.owner;
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  if (owner == self_) {
    owner_settle(it->second.queue_key, id, std::move(tags), true, true, std::move(reply));
  } else {
    executor_.post(owner, [peer = peers_[owner.value()], key = it->second.queue_key, id, tags = std::move(tags),
                           reply = std::move(reply)]() mutable {
      peer->owner_settle(std::move(key), id, std::move(tags), true, true, std::move(reply));
    });
  }
}

void Broker::nack(ConsumerId id, std::vector<std::uint64_t> tags, Completion done) {
  auto it = subscriptions_.find(id);
  if (it == subscriptions_.end()) {
    complete_on(self_, std::move(done), unexpected(Errc::not_found, "no such subscription"));
    return;
  }
  if (it->second.topic) {
    auto& sub = topic_subscriptions_.at(id);
    (void)sub.queue->nack(id, tags);
    dispatch(*sub.queue, false);
    complete_on(self_, std::move(done), ok());
    return;
  }
  const auto owner = it->second.owner;
  auto reply = [this, done = std::move(done)](Status st) mutable { complete_on(self_, std::move(done), std::move(st)); };
  if (owner == self_) {
    owner_settle(it->second.queue_key, id, std::move(tags), false, false, std::move(reply));
  } else {
    executor_.post(owner, [peer = peers_[owner.value()], key = it->second.queue_key, id, tags = std::move(tags),
                           reply = std::move(reply)]() mutable {
      peer->owner_settle(std::move(key), id, std::move(tags), false, false, std::move(reply));
    });
  }
}

// ---------------------------------------------------------------- owner side

Queue* Broker::find_or_create_queue(const std::string& key) {
  auto it = queues_.find(key);
  if (it != queues_.end()) return it->second.get();
  auto [ins, _] = queues_.emplace(key, std::make_unique<Queue>(key));
  return ins->second.get();
}

void Broker::owner_enqueue(std::vector<MessagePtr> messages) {
  // Consecutive messages for one queue are dispatched together.
  Queue* current = nullptr;
  for (auto& m : messages) {
    Queue* q = find_or_create_queue(m->destination.key());
    if (current != nullptr && q != current) dispatch(*current, true);
    current = q;
    q->enqueue(std::move(m));
  }
  if (current != nullptr) dispatch(*current, true);
}

void Broker::owner_add_consumer(std::string key, ConsumerRef ref, Completion done) {
  Queue* q = find_or_create_queue(key);
  q->add_consumer(std::move(ref));
  if (done) done(ok());
  dispatch(*q, true);
}

void Broker::owner_remove_consumer(std::string key, ConsumerId id, Completion done) {
  auto it = queues_.find(key);
  if (it != queues_.end()) {
    it->second->remove_consumer(id);
    dispatch(*it->second, true);
  }
  if (done) done(ok());
}

void Broker::owner_settle(std::string key, ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack,
                          bool persist_acks, Completion done) {
  auto it = queues_.find(key);
  if (it == queues_.end()) {
    if (done) done(unexpected(Errc::not_found, "queue " + key));
    return;
  }
  Queue& q = *it->second;
  if (!is_ack) {
    (void)q.nack(id, tags);
    dispatch(q, true);
    if (done) done(ok());
    return;
  }
  auto outcome = q.ack(id, tags);
  store::Batch batch;
  if (persist_acks) {
    for (const auto& m : outcome.removed) {
      if (m->persistent) batch.push_back(store::Record::acked(key, m->id));
    }
  }
  dispatch(q, true);
  if (batch.empty()) {
    if (done) done(ok());
    return;
  }
  store_.append(std::move(batch), [done = std::move(done)](Status st) mutable {
    // `done` is ack()'s reply, which hops to the consumer's shard itself.
    if (done) done(std::move(st));
  });
}

void Broker::dispatch(Queue& queue, bool durable) {
  std::vector<MessagePtr> expired;
  auto batches = queue.dispatch(now_ms(), expired);
  store::Batch records;
  if (durable) {
    for (const auto& m : expired) {
      if (m->persistent) records.push_back(store::Record::acked(queue.key(), m->id));
    }
  }
  for (auto& d : batches) {
    // Delivery records let a restart flag these messages redelivered; auto-acked ones are acked
    // as soon as they are written, so they need none.
    if (durable && d.consumer.ack_mode != AckMode::auto_ack) {
      for (const auto& del : d.batch) {
        if (del.message->persistent) {
          records.push_back(store::Record::delivered(queue.key(), del.message->id, del.delivery_count));
        }
      }
    }
    if (d.consumer.home == self_) {
      d.consumer.consumer->deliver(d.consumer.id, std::move(d.batch));
    } else {
      executor_.post(d.consumer.home, [c = d.consumer.consumer, id = d.consumer.id, batch = std::move(d.batch)]() mutable {
        c->deliver(id, std::move(batch));
      });
    }
  }
  if (!records.empty()) persist_async(std::move(records));
}

void Broker::persist_async(store::Batch batch) {
  store_.append(std::move(batch), [](Status) {
    // Acks of expired messages and delivery hints: losing one at a crash only means a message
    // comes back (or comes back unflagged); nobody waits on them.
  });
}

void Broker::restore(const std::string& queue_key, MessagePtr message, std::uint32_t delivery_count) {
  find_or_create_queue(queue_key)->restore(std::move(message), delivery_count);
}

// ---------------------------------------------------------------- topics

void Broker::broadcast(std::function<void(Broker&)> fn, Completion done) {
  auto fan = std::make_shared<FanIn>(FanIn{peers_.size(), ok(), std::move(done)});
  const ShardId home = self_;
  for (auto* peer : peers_) {
    auto step = [peer, fn, fan, home, this]() {
      fn(*peer);
      // Count on the home shard only: FanIn is not shared across threads.
      auto finish = [fan]() {
        if (--fan->remaining == 0 && fan->done) fan->done(fan->first_error);
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

void Broker::index_add(std::string filter, TopicSubscriber subscriber) { topic_index_.add(filter, subscriber); }

void Broker::index_remove(std::string filter, ConsumerId id) { (void)topic_index_.remove(filter, id); }

void Broker::publish(const std::vector<MessagePtr>& messages) {
  const std::size_t n = peers_.size();
  std::vector<std::vector<std::pair<ConsumerId, MessagePtr>>> by_home(n);
  std::vector<TopicSubscriber> matched;
  for (const auto& m : messages) {
    matched.clear();
    topic_index_.match(m->destination.name, matched);
    for (const auto& s : matched) by_home[s.home.value()].emplace_back(s.id, m);
  }
  for (std::size_t s = 0; s < n; ++s) {
    if (by_home[s].empty()) continue;
    if (s == self_.value()) {
      topic_enqueue(std::move(by_home[s]));
    } else {
      executor_.post(ShardId(static_cast<std::uint32_t>(s)),
                     [peer = peers_[s], batch = std::move(by_home[s])]() mutable { peer->topic_enqueue(std::move(batch)); });
    }
  }
}

void Broker::topic_enqueue(std::vector<std::pair<ConsumerId, MessagePtr>> deliveries) {
  Queue* current = nullptr;
  for (auto& [id, m] : deliveries) {
    auto it = topic_subscriptions_.find(id);
    if (it == topic_subscriptions_.end()) continue;  // unsubscribed while the message was on its way
    Queue* q = it->second.queue.get();
    if (current != nullptr && q != current) dispatch(*current, false);
    current = q;
    q->enqueue(std::move(m));
  }
  if (current != nullptr) dispatch(*current, false);
}

BrokerStats Broker::stats() const {
  BrokerStats s;
  s.queues = queues_.size();
  for (const auto& [k, q] : queues_) {
    s.messages_ready += q->depth();
    s.messages_unacked += q->unacked();
  }
  s.topic_subscriptions = topic_subscriptions_.size();
  return s;
}

}  // namespace carrier::core
