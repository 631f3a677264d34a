#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/result.hpp"
#include "core/broker_types.hpp"
#include "core/consumer.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class Broker;

// Names one lease anywhere in the process: the shard whose LeaseTable holds it, that table's
// sequence number, and a random secret so that ids cannot be guessed from one another.
// Text form: "<shard>-<seq hex>-<secret, 16 hex digits>".
struct LeaseId {
  model::ShardId shard;
  std::uint64_t seq = 0;
  std::uint64_t secret = 0;

  std::string to_string() const;
  // nullopt: not a lease id's text form.
  static std::optional<LeaseId> parse(std::string_view text);
};

// How a lease ends: acked (gone for good), nacked (given back now, a delivery counted for the
// redelivery policy) or rejected (dead-lettered, never requeued: STOMP's NACK requeue:false).
enum class LeaseEnd : std::uint8_t { ack, nack, reject };

// Bounds on leases, checked when a poll reserves room for them (HTTP's [http] keys).
struct LeaseLimits {
  std::size_t max_total = 0;     // on this shard, held and reserved; 0: unbounded
  std::size_t max_per_user = 0;  // one user's on this shard; 0: unbounded
};

// Leased deliveries (HTTP's ack=lease, seed 002's mailbox): a poll's consumer hands its
// answered deliveries over; each becomes a lease that ends by an ack or a nack naming its id
// (from any shard, through Broker::end_lease), or gives its message back when its visibility
// runs out (a nack: counted as a delivery, so redelivery delays and max_deliveries apply).
// The consumer stays attached, paused, holding the deliveries unacked, until its last lease
// ends; then it is detached. Nothing here depends on the connection that polled.
// Runs on: its shard (the consumers' home); other shards reach it by posting to its Broker.
class LeaseTable {
 public:
  LeaseTable(ShardContext& shard, Broker& broker) : shard_(shard), broker_(broker) {}
  LeaseTable(const LeaseTable&) = delete;
  LeaseTable& operator=(const LeaseTable&) = delete;

  // Room for up to `wanted` leases of `user`, held until grant() or unreserve(): how many may be
  // taken (at least 1), or limit_exceeded at a limit.
  Result<std::uint32_t> reserve(const std::string& user, std::uint32_t wanted, const LeaseLimits& limits);
  void unreserve(const std::string& user, std::uint32_t reserved);
  // Leases `batch` (deliveries of `consumer`, at most `reserved` of them) for `visibility_ms`,
  // using the reservation; returns their ids in order. With an empty batch the caller detaches
  // the consumer itself.
  std::vector<LeaseId> grant(const std::string& user, std::uint32_t reserved, ConsumerId consumer,
                             std::span<const Delivery> batch, std::uint64_t visibility_ms);
  // Ends a lease held here; not_found if there is none by that id (never granted, run out, or
  // ended already). `done` runs here once the ack or nack has taken effect.
  void end(const LeaseId& id, LeaseEnd how, Completion done);
  // Whether `consumer` holds leases here (a delivery it gets now belongs to no poll).
  bool holds(ConsumerId consumer) const { return consumers_.contains(consumer); }
  // When the lease ends by running out (epoch ms); nullopt if it is not held.
  std::optional<std::int64_t> deadline(const LeaseId& id) const;

  std::size_t size() const { return leases_.size(); }
  std::size_t reserved_or_held() const { return total_; }

 private:
  struct Lease {
    std::uint64_t secret = 0;
    ConsumerId consumer;
    std::uint64_t tag = 0;
    std::int64_t deadline_ms = 0;
    std::string user;
  };

  void finish(std::unordered_map<std::uint64_t, Lease>::iterator it, LeaseEnd how, Completion done);
  void expire(const std::vector<std::uint64_t>& seqs);
  void uncount(const std::string& user, std::size_t n);

  ShardContext& shard_;
  Broker& broker_;
  std::uint64_t next_seq_ = 1;
  std::unordered_map<std::uint64_t, Lease> leases_;
  std::unordered_map<ConsumerId, std::size_t> consumers_;  // leases each consumer still holds
  std::unordered_map<std::string, std::size_t> users_;     // reserved + held, per user
  std::size_t total_ = 0;                                  // reserved + held
};

}  // namespace carrier::core
