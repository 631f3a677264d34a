#include "admin/shard_snapshot.hpp"

#include <chrono>
#include <memory>

#include "net/transport.hpp"

namespace carrier::admin {

ShardSnapshot take_snapshot(core::Broker& broker, SnapshotScope scope) {
  ShardSnapshot s;
  s.counters = broker.context().counters;
  s.stats = broker.stats();
  const auto& transports = net::Transport::on_this_shard();
  const auto steady_now = std::chrono::steady_clock::now();
  const auto epoch_now = broker.now_ms();
  for (auto* t : transports) {
    ++s.connections_by_protocol[t->protocol()];
    if (!scope.connections) continue;
    const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(steady_now - t->connected_at()).count();
    s.connections.push_back(ConnectionRow{t->id(), t->protocol(), t->peer(), epoch_now - age, t->queued_bytes(),
                                          broker.shard().value(), t->client_id(), t->user(),
                                          t->sample_rates(steady_now)});
  }
  if (scope.queues) {
    s.queues.reserve(broker.owned_queues().size());
    broker.owned_queues().for_each([&s](const std::string& key, const core::OwnedQueue& oq) {
      const auto& q = *oq.queue;
      s.queues.push_back(QueueRow{key, q.depth(), q.ready_bytes(), q.unacked(), q.consumer_count(),
                                  q.enqueued_total(), oq.durable, q.oldest_ready_timestamp_ms()});
    });
  }
  if (scope.topics) {
    std::map<std::string, TopicRow> by_filter;
    broker.topics().for_each_private([&by_filter](const std::string& filter, const core::Queue& q) {
      auto& row = by_filter[filter];
      row.filter = filter;
      ++row.subscriptions;
      row.consumers += q.consumer_count();
      row.depth += q.depth();
      row.bytes += q.ready_bytes();
      row.unacked += q.unacked();
      row.enqueued += q.enqueued_total();
    });
    for (auto& [filter, row] : by_filter) s.topics.push_back(std::move(row));
  }
  return s;
}

void collect(core::Broker& here, SnapshotScope scope, std::function<void(std::vector<ShardSnapshot>)> done) {
  // Each shard writes only its own slot; `done` runs after every shard's post has run.
  auto slots = std::make_shared<std::vector<ShardSnapshot>>(here.context().shard_count());
  here.context().broadcast(
      [slots, scope](core::Broker& b) { (*slots)[b.shard().value()] = take_snapshot(b, scope); },
      [slots, done = std::move(done)](Status) { done(std::move(*slots)); });
}

void find_queue(core::Broker& here, std::string key, std::function<void(std::optional<QueueRow>)> done) {
  auto& ctx = here.context();
  const model::ShardId home = ctx.self;
  ctx.post_to(ctx.owner_of(key), [home, key, done = std::move(done)](core::Broker& owner) mutable {
    std::optional<QueueRow> row;
    if (const auto* oq = owner.owned_queues().find(key)) {
      const auto& q = *oq->queue;
      row = QueueRow{key, q.depth(), q.ready_bytes(), q.unacked(), q.consumer_count(),
                     q.enqueued_total(), oq->durable, q.oldest_ready_timestamp_ms()};
    }
    owner.context().post_to(home, [done = std::move(done), row = std::move(row)](core::Broker&) mutable {
      done(std::move(row));
    });
  });
}

ShardSnapshot merge(std::vector<ShardSnapshot> shards) {
  ShardSnapshot all;
  for (auto& s : shards) {
    auto& c = all.counters;
    c.published += s.counters.published;
    c.delivered += s.counters.delivered;
    c.redelivered += s.counters.redelivered;
    c.dead_lettered += s.counters.dead_lettered;
    c.paged_out += s.counters.paged_out;
    c.paged_in += s.counters.paged_in;
    c.page_in_missing += s.counters.page_in_missing;
    c.page_in_failed += s.counters.page_in_failed;
    c.spilled += s.counters.spilled;
    c.publish_to_deliver.merge(s.counters.publish_to_deliver);
    auto& t = all.stats;
    t.queues += s.stats.queues;
    t.messages_ready += s.stats.messages_ready;
    t.messages_unacked += s.stats.messages_unacked;
    t.messages_cold += s.stats.messages_cold;
    t.topic_subscriptions += s.stats.topic_subscriptions;
    // Every shard holds every named subscription: one shard's count is the broker's.
    t.named_subscriptions = s.stats.named_subscriptions;
    t.retained += s.stats.retained;
    t.scheduled += s.stats.scheduled;
    t.backlog_dropped += s.stats.backlog_dropped;
    for (const auto& [protocol, n] : s.connections_by_protocol) all.connections_by_protocol[protocol] += n;
    all.queues.insert(all.queues.end(), std::make_move_iterator(s.queues.begin()),
                      std::make_move_iterator(s.queues.end()));
    all.connections.insert(all.connections.end(), std::make_move_iterator(s.connections.begin()),
                           std::make_move_iterator(s.connections.end()));
    all.topics.insert(all.topics.end(), std::make_move_iterator(s.topics.begin()),
                      std::make_move_iterator(s.topics.end()));
  }
  // One row per filter: the shards' rows of the same filter added up.
  std::map<std::string, TopicRow> topics;
  for (auto& t : all.topics) {
    auto& row = topics[t.filter];
    row.filter = t.filter;
    row.subscriptions += t.subscriptions;
    row.consumers += t.consumers;
    row.depth += t.depth;
    row.bytes += t.bytes;
    row.unacked += t.unacked;
    row.enqueued += t.enqueued;
  }
  all.topics.clear();
  for (auto& [filter, row] : topics) all.topics.push_back(std::move(row));
  return all;
}

}  // namespace carrier::admin
