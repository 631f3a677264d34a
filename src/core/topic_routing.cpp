#include "core/topic_routing.hpp"

#include "core/broker.hpp"
#include "core/owned_queues.hpp"
#include "core/redelivery.hpp"
#include "core/retained_messages.hpp"
#include "core/router.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Message;
using model::MessagePtr;

ConsumerId TopicRouting::subscribe(SubscribeRequest request, ConsumerRef ref, Completion done) {
  const ConsumerId id = ref.id;
  SubscriptionInfo info;
  info.destination = request.destination;
  info.topic_private = true;
  // The selector is applied when the message is matched, before it reaches this queue.
  ref.selector = nullptr;
  auto queue = std::make_unique<Queue>("private:" + request.destination.name);
  queue->add_consumer(std::move(ref));
  private_.emplace(id, TopicSubscription{request.destination.name, std::move(queue)});
  shard_.account(OwnedQueues::kQueueOverheadBytes);
  subscriptions_.emplace(id, std::move(info));
  TopicSubscriber sub{id, shard_.self, {}, false, request.selector, request.no_local_origin};
  auto finish = std::move(done);
  if (request.want_retained) {
    finish = [this, filter = request.destination.name, sub, done = std::move(finish)](Status st) mutable {
      retained_.send(filter, sub);
      if (done) done(std::move(st));
    };
  }
  shard_.broadcast([filter = request.destination.name, sub](Broker& b) { b.topics().index_add(filter, sub); },
                   std::move(finish));
  return id;
}

void TopicRouting::unsubscribe(ConsumerId id, Completion done) {
  auto sub = private_.find(id);
  std::string filter = sub->second.filter;
  relieve_backlog(sub->second, true);  // a mark left behind would pause its topics for good
  for (auto& e : sub->second.queue->take_all()) shard_.account_release(*e.message);
  private_.erase(sub);
  shard_.account(-OwnedQueues::kQueueOverheadBytes);
  shard_.broadcast([filter, id](Broker& b) { b.topics().index_remove(filter, id); }, std::move(done));
}

void TopicRouting::settle(ConsumerId id, std::vector<std::uint64_t> tags, bool is_ack, bool requeue) {
  auto& sub = private_.at(id);
  if (is_ack) {
    auto outcome = sub.queue->ack(id, tags);
    for (const auto& m : outcome.removed) shard_.account_release(*m);
    queues_.dispatch(sub.queue->key(), *sub.queue, false);
  } else {
    auto outcome = sub.queue->nack(id, tags);
    if (requeue) {
      redelivery_.handle_returned(sub.queue->key(), *sub.queue, false, std::move(outcome.returned));
    } else {
      redelivery_.handle_rejected(sub.queue->key(), *sub.queue, false, std::move(outcome.returned));
    }
  }
  relieve_backlog(sub);
}

Queue* TopicRouting::private_queue(const std::string& key) {
  Queue* q = nullptr;
  for (auto& [id, sub] : private_) {
    if (sub.queue->key() == key) q = sub.queue.get();
  }
  return q;
}

void TopicRouting::sweep(std::int64_t now, store::Batch& batch) {
  for (auto& [id, sub] : private_) {
    std::vector<MessagePtr> gone;
    for (auto& e : sub.queue->take_expired(now)) gone.push_back(std::move(e.message));
    if (!gone.empty()) queues_.release(sub.queue->key(), false, gone, batch);
    relieve_backlog(sub);
  }
}

// ---------------------------------------------------------------- scheduled topic messages

std::string TopicRouting::scheduled_topic_key(const Message& m) {
  // One reserved queue per topic: the copies of a composite send share a message id.
  return model::QueueKey::format(model::QueueKind::scheduled_topic, m.destination.name);
}

bool TopicRouting::is_scheduled_topic_key(std::string_view key) {
  return key.starts_with(model::QueueKey::prefix(model::QueueKind::scheduled_topic));
}

void TopicRouting::schedule(MessagePtr m) {
  shard_.account_hold(*m);
  const auto due = m->deliver_at_ms;  // read before the lambda takes `m`
  shard_.at(due, [this, m = std::move(m)]() { publish_due(m); });
}

void TopicRouting::publish_due(const MessagePtr& m) {
  shard_.account_release(*m);
  std::vector<Routed> to_queues;
  Router::ToPrivate to_private;
  std::vector<MessagePtr> retained;
  store::Batch batch;
  router_.plan({m}, to_queues, to_private, retained, batch);
  // Its durable subscriptions' copies replace the scheduled record in one batch.
  if (m->persistent) batch.push_back(store::Record::acked(scheduled_topic_key(*m), m->id));
  if (!batch.empty()) shard_.store.append(std::move(batch), [](Status) {});
  for (auto& r : retained) retained_.retain(std::move(r));
  router_.route(std::move(to_queues), std::move(to_private), nullptr);
}

// ---------------------------------------------------------------- private queues and their backlog

void TopicRouting::enqueue(std::vector<std::pair<ConsumerId, MessagePtr>> deliveries) {
  // The router lists a batch message by message, each with all its subscribers: a queue is
  // listed once per call, and dispatched once, however many of the batch's messages it took
  // (the first dispatch delivers them all; listing it per message made the rest idle calls, and
  // with 10,000 subscribers a list of 640,000 entries for a batch of 64).
  const std::uint64_t call = ++enqueue_calls_;
  std::vector<Queue*> dirty;
  std::vector<std::pair<ConsumerId, std::string>> over;  // (subscription, topic) past the bound
  const Message* last = nullptr;
  const DestinationPolicy* policy = nullptr;
  const std::uint64_t bound = shard_.options.backlog_bound();
  const bool dropping = bound != 0 && shard_.options.subscriber_backlog_overflow == OverflowPolicy::drop_oldest;
  const bool blocking = bound != 0 && !dropping && shard_.pressure != nullptr;
  for (auto& [id, m] : deliveries) {
    auto it = private_.find(id);
    if (it == private_.end()) continue;  // unsubscribed while the message was on its way
    Queue* q = it->second.queue.get();
    if (m.get() != last) {
      last = m.get();
      policy = &shard_.policy_for(m->destination);
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
    shard_.account_hold(*m);
    const std::string& topic = m->destination.name;
    // Taken even past the bound: the topic's producers pause at their next SEND instead. Noted
    // once per topic while over (a producer the mark has not reached yet keeps sending).
    if (bounded && q->ready_bytes() + m->footprint() > bound && !it->second.pressing.contains(topic) &&
        (over.empty() || over.back().first != id || over.back().second != topic)) {
      over.emplace_back(id, topic);
    }
    q->enqueue(std::move(m));
    if (it->second.marked_in != call) {
      it->second.marked_in = call;
      dirty.push_back(q);
    }
  }
  for (auto* q : dirty) queues_.dispatch(q->key(), *q, false);
  // Still over once its consumer took what it could: hold back those topics' producers.
  for (auto& [id, topic] : over) {
    auto it = private_.find(id);  // a delivery may have ended it
    if (it != private_.end() && it->second.queue->ready_bytes() > bound) press_backlog(it->second, topic);
  }
}

void TopicRouting::trim_backlog(Queue& q, const Message& m) {
  while (q.ready_bytes() + m.footprint() > shard_.options.backlog_bound()) {
    Queue::Entry oldest;
    if (!q.take_oldest(oldest)) return;
    shard_.account_release(*oldest.message);
    ++backlog_dropped_;
  }
}

void TopicRouting::press_backlog(TopicSubscription& sub, const std::string& topic) {
  // Once per topic and subscription (a wildcard one marks each topic it keeps receiving).
  if (!sub.pressing.insert(topic).second) return;
  shard_.pressure->block(model::QueueKey::format(model::QueueKind::topic, topic));
}

void TopicRouting::relieve_backlog(TopicSubscription& sub, bool all) {
  if (sub.pressing.empty()) return;
  const std::uint64_t bound = shard_.options.backlog_bound();
  if (!all && sub.queue->ready_bytes() * 10 >= bound * 9) return;  // hysteresis: not at every ack
  std::vector<std::string> keys;
  keys.reserve(sub.pressing.size());
  for (const auto& name : sub.pressing) keys.push_back(model::QueueKey::format(model::QueueKind::topic, name));
  sub.pressing.clear();
  shard_.pressure->clear_all(keys);
}

bool TopicRouting::fits_private(Queue& q, const DestinationPolicy& policy, const Message& m) {
  auto full = [&]() {
    return (policy.max_messages != 0 && q.depth() + q.unacked() >= policy.max_messages) ||
           (policy.max_bytes != 0 && q.ready_bytes() + m.footprint() > policy.max_bytes);
  };
  while (full()) {
    Queue::Entry oldest;
    if (policy.overflow != OverflowPolicy::drop_oldest || !q.take_oldest(oldest)) return false;
    shard_.account_release(*oldest.message);
  }
  return true;
}

}  // namespace carrier::core
