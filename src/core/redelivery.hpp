#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/owned_queues.hpp"
#include "core/queue.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class Router;
class TopicRouting;

// Redelivery and dead letters: what happens to a delivery that comes back (nacked, or its
// consumer gone) or is rejected, and to a message that expires in a queue. Per its destination's
// policy a returned message is requeued at once, after a delay (exponential, capped, jittered;
// waiting in the shard's schedule, outside its queue), or, past max_deliveries, moved to the
// dead-letter queue: gone from the source and present in the DLQ in one store batch.
// Runs on: the shard that owns the queue (or the private topic queue's shard).
class Redelivery {
 public:
  Redelivery(ShardContext& shard, OwnedQueues& queues, TopicRouting& topics, Router& router)
      : shard_(shard), queues_(queues), topics_(topics), router_(router) {}
  Redelivery(const Redelivery&) = delete;
  Redelivery& operator=(const Redelivery&) = delete;

  // Returned deliveries: dead-letter, delay or requeue each per its destination's policy.
  void handle_returned(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries);
  // Rejected deliveries: dead-lettered (or dropped), never requeued.
  void handle_rejected(const std::string& key, Queue& queue, bool stored, std::vector<Queue::Entry> entries);
  // Moves one message to its policy's dead-letter queue (or drops it without one): its records
  // go to `batch`, the copy for the DLQ to `moved`; finish_dead_letters writes and routes them.
  void dead_letter(const std::string& key, bool stored, Queue::Entry entry, std::string_view reason,
                   store::Batch& batch, std::vector<Routed>& moved);
  void finish_dead_letters(store::Batch batch, std::vector<Routed> moved) {
    if (batch.empty() && moved.empty()) return;  // every dispatch ends here: keep it cheap
    write_and_route(std::move(batch), std::move(moved));
  }
  // The wait before the `deliveries`-th redelivery under policy `p` (0: at once).
  std::int64_t redelivery_delay(const DestinationPolicy& p, std::uint32_t deliveries);

 private:
  void write_and_route(store::Batch batch, std::vector<Routed> moved);

  ShardContext& shard_;
  OwnedQueues& queues_;
  TopicRouting& topics_;
  Router& router_;
};

}  // namespace carrier::core
