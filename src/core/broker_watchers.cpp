// Queue watchers: wildcard queue subscriptions (`SUBSCRIBE /queue/orders.*`, ActiveMQ). Every
// shard keeps every watcher's filter; each attaches it to the matching queues it owns, now and
// as they are created, as one child consumer per queue with an id of its own. The owner tells
// the parent's home shard of each child before the child's first delivery (posts between two
// shards arrive in order), so acks name the child and reach the right queue.
#include <algorithm>

#include "core/broker.hpp"

namespace carrier::core {

using model::Destination;
using model::ShardId;

namespace {

constexpr std::string_view kQueuePrefix = "queue:";

bool watchable(std::string_view key) {
  // Named queues only: not temporary queues, nor reserved `$` ones, nor subscriptions' queues.
  return key.substr(0, kQueuePrefix.size()) == kQueuePrefix && key.size() > kQueuePrefix.size() &&
         key[kQueuePrefix.size()] != '$';
}

}  // namespace

Result<ConsumerId> Broker::subscribe_watcher(SubscribeRequest request, ConsumerRef ref, Completion done) {
  const ConsumerId id = ref.id;
  SubscriptionInfo info;
  info.destination = request.destination;
  info.watcher = true;
  subscriptions_.emplace(id, std::move(info));
  // Posted to every shard, this one included: the caller learns the id before any child exists.
  // Each owner's notices of children precede its part of the completion, so `done` means every
  // existing matching queue is attached.
  auto remaining = std::make_shared<std::size_t>(peers_.size());
  auto finish = std::make_shared<Completion>(std::move(done));
  const ShardId home = self_;
  for (auto* peer : peers_) {
    post_to(peer->shard(), [filter = request.destination.name, ref, remaining, finish, home](Broker& b) {
      b.watch_add(filter, ref);
      b.post_to(home, [remaining, finish](Broker&) {
        if (--*remaining == 0 && *finish) (*finish)(ok());
      });
    });
  }
  return id;
}

void Broker::unsubscribe_watcher(ConsumerId id, SubscriptionInfo info, Completion done) {
  for (auto child : info.children) subscriptions_.erase(child);
  auto remaining = std::make_shared<std::size_t>(peers_.size());
  auto finish = std::make_shared<Completion>(std::move(done));
  const ShardId home = self_;
  for (auto* peer : peers_) {
    post_to(peer->shard(), [id, remaining, finish, home](Broker& b) {
      b.watch_remove(id);
      b.post_to(home, [remaining, finish](Broker&) {
        if (--*remaining == 0 && *finish) (*finish)(ok());
      });
    });
  }
}

void Broker::watch_add(std::string filter, ConsumerRef ref) {
  const ConsumerId parent = ref.id;
  watch_index_.add(filter, TopicSubscriber{parent, ref.home, {}, false, nullptr, 0});
  auto& w = watchers_[parent];
  w.filter = std::move(filter);
  w.ref = std::move(ref);
  for (auto& [key, oq] : queues_) {
    if (!watchable(key) || !DestinationTree::filter_matches(w.filter, std::string_view(key).substr(kQueuePrefix.size()))) {
      continue;
    }
    watch_attach(key, oq, w);
    dispatch(key, *oq.queue, oq.stored);
  }
}

void Broker::watch_remove(ConsumerId parent) {
  auto it = watchers_.find(parent);
  if (it == watchers_.end()) return;
  watch_index_.remove(it->second.filter, parent);
  auto keys = std::move(it->second.keys);
  watchers_.erase(it);
  for (const auto& key : keys) {
    auto q = queues_.find(key);
    if (q == queues_.end()) continue;
    auto& oq = q->second;
    auto& children = oq.watch_children;
    auto child = std::find_if(children.begin(), children.end(), [&](const auto& pc) { return pc.first == parent; });
    if (child == children.end()) continue;
    auto returned = oq.queue->remove_consumer(child->second);
    children.erase(child);
    // Its unacknowledged messages go back to the queue, for the other consumers.
    handle_returned(key, *oq.queue, oq.stored, std::move(returned));
  }
}

void Broker::watch_attach(const std::string& key, OwnedQueue& oq, const Watcher& w) {
  const ConsumerId parent = w.ref.id;
  const ConsumerId child((static_cast<std::uint64_t>(self_.value()) << 48) | next_consumer_++);
  watchers_[parent].keys.push_back(key);
  oq.watch_children.emplace_back(parent, child);
  // The notice goes first: deliveries to the child follow it on the same path.
  if (w.ref.home == self_) {
    watch_attached(parent, child, key, self_, w.ref.consumer);
  } else {
    post_to(w.ref.home, [parent, child, key, owner = self_, consumer = w.ref.consumer](Broker& b) mutable {
      b.watch_attached(parent, child, std::move(key), owner, std::move(consumer));
    });
  }
  ConsumerRef ref = w.ref;
  ref.id = child;
  oq.queue->add_consumer(std::move(ref));
}

void Broker::watch_attach_new(const std::string& key, OwnedQueue& oq) {
  if (watch_index_.size() == 0 || !watchable(key)) return;
  std::vector<TopicSubscriber> matched;
  watch_index_.match(std::string_view(key).substr(kQueuePrefix.size()), matched);
  for (const auto& s : matched) {
    auto it = watchers_.find(s.id);
    if (it != watchers_.end()) watch_attach(key, oq, it->second);
  }
}

void Broker::watch_drop_queue(const std::string& key, OwnedQueue& oq) {
  for (const auto& [parent, child] : oq.watch_children) {
    auto it = watchers_.find(parent);
    if (it == watchers_.end()) continue;
    auto& keys = it->second.keys;
    keys.erase(std::remove(keys.begin(), keys.end(), key), keys.end());
    const auto home = it->second.ref.home;
    auto consumer = it->second.ref.consumer;
    if (home == self_) {
      watch_detached(parent, child, std::move(consumer));
    } else {
      post_to(home, [parent, child, consumer = std::move(consumer)](Broker& b) mutable {
        b.watch_detached(parent, child, std::move(consumer));
      });
    }
  }
  oq.watch_children.clear();
}

void Broker::watch_attached(ConsumerId parent, ConsumerId child, std::string key, ShardId owner,
                            std::shared_ptr<Consumer> consumer) {
  auto it = subscriptions_.find(parent);
  // Unsubscribed meanwhile: the owner detaches the child when the removal reaches it.
  if (it == subscriptions_.end() || !it->second.watcher) return;
  it->second.children.push_back(child);
  SubscriptionInfo info;
  if (auto d = Destination::from_key(key)) info.destination = *d;
  info.owner = owner;
  info.queue_key = std::move(key);
  subscriptions_.emplace(child, std::move(info));
  if (consumer) consumer->attached(parent, child);
}

void Broker::watch_detached(ConsumerId parent, ConsumerId child, std::shared_ptr<Consumer> consumer) {
  auto it = subscriptions_.find(parent);
  if (it == subscriptions_.end() || !it->second.watcher) return;
  auto& children = it->second.children;
  children.erase(std::remove(children.begin(), children.end(), child), children.end());
  subscriptions_.erase(child);
  if (consumer) consumer->detached(parent, child);
}

bool Broker::only_watched(const OwnedQueue& oq) {
  if (oq.queue->consumer_count() == 0) return true;
  return oq.queue->consumer_count() == oq.watch_children.size() && oq.queue->depth() == 0 && oq.queue->unacked() == 0;
}

}  // namespace carrier::core
