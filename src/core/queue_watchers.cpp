// Queue watchers (queue_watchers.hpp): wildcard queue subscriptions.
#include "core/queue_watchers.hpp"

#include <algorithm>

#include "core/broker.hpp"
#include "core/redelivery.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::ShardId;


namespace {

const std::string_view kQueuePrefix = model::QueueKey::prefix(model::QueueKind::queue);

bool watchable(std::string_view key) {
  // Named queues only: not temporary queues, nor reserved `$` ones, nor subscriptions' queues.
  return key.substr(0, kQueuePrefix.size()) == kQueuePrefix && key.size() > kQueuePrefix.size() &&
         key[kQueuePrefix.size()] != '$';
}

}  // namespace

ConsumerId QueueWatchers::subscribe(SubscribeRequest request, ConsumerRef ref, Completion done) {
  const ConsumerId id = ref.id;
  SubscriptionInfo info;
  info.destination = request.destination;
  info.watcher = true;
  subscriptions_.emplace(id, std::move(info));
  // Posted to every shard, this one included: the caller learns the id before any child exists.
  // Each owner's notices of children precede its part of the completion, so `done` means every
  // existing matching queue is attached.
  auto remaining = std::make_shared<std::size_t>(shard_.shard_count());
  auto finish = std::make_shared<Completion>(std::move(done));
  const ShardId home = shard_.self;
  for (auto* peer : shard_.peers) {
    shard_.post_to(peer->shard(), [filter = request.destination.name, ref, remaining, finish, home](Broker& b) {
      b.queue_watchers().add(filter, ref);
      b.context().post_to(home, [remaining, finish](Broker&) {
        if (--*remaining == 0 && *finish) (*finish)(ok());
      });
    });
  }
  return id;
}

void QueueWatchers::unsubscribe(ConsumerId id, const SubscriptionInfo& info, Completion done) {
  for (auto child : info.children) subscriptions_.erase(child);
  auto remaining = std::make_shared<std::size_t>(shard_.shard_count());
  auto finish = std::make_shared<Completion>(std::move(done));
  const ShardId home = shard_.self;
  for (auto* peer : shard_.peers) {
    shard_.post_to(peer->shard(), [id, remaining, finish, home](Broker& b) {
      b.queue_watchers().remove(id);
      b.context().post_to(home, [remaining, finish](Broker&) {
        if (--*remaining == 0 && *finish) (*finish)(ok());
      });
    });
  }
}

void QueueWatchers::add(std::string filter, ConsumerRef ref) {
  const ConsumerId parent = ref.id;
  index_.add(filter, TopicSubscriber{parent, ref.home, {}, false, nullptr, 0});
  auto& w = watchers_[parent];
  w.filter = std::move(filter);
  w.ref = std::move(ref);
  queues_.for_each([&](const std::string& key, OwnedQueue& oq) {
    if (!watchable(key) || !DestinationTree::filter_matches(w.filter, std::string_view(key).substr(kQueuePrefix.size()))) {
      return;
    }
    attach(key, oq, w);
    queues_.dispatch(key, *oq.queue, oq.stored);
  });
}

void QueueWatchers::remove(ConsumerId parent) {
  auto it = watchers_.find(parent);
  if (it == watchers_.end()) return;
  index_.remove(it->second.filter, parent);
  auto keys = std::move(it->second.keys);
  watchers_.erase(it);
  for (const auto& key : keys) {
    auto* q = queues_.find(key);
    if (q == nullptr) continue;
    auto& oq = *q;
    auto& children = oq.watch_children;
    auto child = std::find_if(children.begin(), children.end(), [&](const auto& pc) { return pc.first == parent; });
    if (child == children.end()) continue;
    auto returned = oq.queue->remove_consumer(child->second);
    children.erase(child);
    // Its unacknowledged messages go back to the queue, for the other consumers.
    redelivery_.handle_returned(key, *oq.queue, oq.stored, std::move(returned));
  }
}

void QueueWatchers::attach(const std::string& key, OwnedQueue& oq, const Watcher& w) {
  const ConsumerId parent = w.ref.id;
  const ConsumerId child = shard_.next_consumer_id();
  watchers_[parent].keys.push_back(key);
  oq.watch_children.emplace_back(parent, child);
  // The notice goes first: deliveries to the child follow it on the same path.
  if (w.ref.home == shard_.self) {
    attached(parent, child, key, shard_.self, w.ref.consumer);
  } else {
    shard_.post_to(w.ref.home, [parent, child, key, owner = shard_.self, consumer = w.ref.consumer](Broker& b) mutable {
      b.queue_watchers().attached(parent, child, std::move(key), owner, std::move(consumer));
    });
  }
  ConsumerRef ref = w.ref;
  ref.id = child;
  oq.queue->add_consumer(std::move(ref));
}

void QueueWatchers::attach_matching(const std::string& key, OwnedQueue& oq) {
  if (!watchable(key)) return;
  std::vector<TopicSubscriber> matched;
  index_.match(std::string_view(key).substr(kQueuePrefix.size()), matched);
  for (const auto& s : matched) {
    auto it = watchers_.find(s.id);
    if (it != watchers_.end()) attach(key, oq, it->second);
  }
}

void QueueWatchers::drop_queue(const std::string& key, OwnedQueue& oq) {
  for (const auto& [parent, child] : oq.watch_children) {
    auto it = watchers_.find(parent);
    if (it == watchers_.end()) continue;
    auto& keys = it->second.keys;
    keys.erase(std::remove(keys.begin(), keys.end(), key), keys.end());
    const auto home = it->second.ref.home;
    auto consumer = it->second.ref.consumer;
    if (home == shard_.self) {
      detached(parent, child, std::move(consumer));
    } else {
      shard_.post_to(home, [parent, child, consumer = std::move(consumer)](Broker& b) mutable {
        b.queue_watchers().detached(parent, child, std::move(consumer));
      });
    }
  }
  oq.watch_children.clear();
}

void QueueWatchers::attached(ConsumerId parent, ConsumerId child, std::string key, ShardId owner,
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

void QueueWatchers::detached(ConsumerId parent, ConsumerId child, std::shared_ptr<Consumer> consumer) {
  auto it = subscriptions_.find(parent);
  if (it == subscriptions_.end() || !it->second.watcher) return;
  auto& children = it->second.children;
  children.erase(std::remove(children.begin(), children.end(), child), children.end());
  subscriptions_.erase(child);
  if (consumer) consumer->detached(parent, child);
}

bool QueueWatchers::only_watched(const OwnedQueue& oq) {
  if (oq.queue->consumer_count() == 0) return true;
  return oq.queue->consumer_count() == oq.watch_children.size() && oq.queue->depth() == 0 && oq.queue->unacked() == 0;
}

}  // namespace carrier::core
