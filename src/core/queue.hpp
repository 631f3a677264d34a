#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/consumer.hpp"
#include "core/unacked_log.hpp"
#include "model/message.hpp"
#include "store/store.hpp"

namespace carrier::core {

// Point-to-point delivery: messages ordered by priority (9 first) then arrival, handed
// round-robin to the consumers that have credit (prefetch minus unacked) and whose selector
// matches; a message no consumer's selector matches stays for a later one.
//
// Pure state: the queue decides, its owner (Broker) performs what it returns — posting batches to
// consumers' shards, persisting acks, scheduling redeliveries. Also the private queue of a topic
// subscription and the queue of a named (durable or shared) subscription.
// Runs on: the owning shard.
class Queue {
 public:
  // How a consumer's selector is evaluated: by default the selector library's matches(); a test
  // may pass its own to count evaluations.
  using Matcher = std::function<bool(const selector::Selector&, const model::Message&)>;

  // What a paged entry keeps of its message, whose body and headers stay in the store until
  // read back (docs/storage.md, "Paging"). Allocated apart so that an entry in memory pays one
  // pointer for it.
  struct Paged {
    store::MessageSummary summary;
    store::Location location;
    bool reading = false;  // a Store::read for it is out
  };

  // A ready or unacked message of the queue: in memory (`message` set) or paged (`paged` set,
  // `message` null). Unacked entries are always in memory: they were delivered.
  struct Entry {
    model::MessagePtr message;
    std::unique_ptr<Paged> paged;
    std::uint64_t seq = 0;  // arrival order within the queue
    std::uint32_t delivery_count = 0;
    bool redelivered = false;

    Entry() = default;
    Entry(Entry&&) noexcept = default;
    Entry& operator=(Entry&&) noexcept = default;
    // Copied only by a redelivery delay's task (std::function needs copies): deep, so a copy
    // never shares the paged record it would free.
    Entry(const Entry& o)
        : message(o.message),
          paged(o.paged ? std::make_unique<Paged>(*o.paged) : nullptr),
          seq(o.seq),
          delivery_count(o.delivery_count),
          redelivered(o.redelivered) {}
    Entry& operator=(const Entry& o) {
      if (this != &o) *this = Entry(o);
      return *this;
    }
    ~Entry() = default;

    bool is_paged() const { return paged != nullptr; }
    // Empty: neither (a hole left by selective dispatch, or a moved-from entry).
    bool empty() const { return !message && !paged; }
    const model::MessageId& id() const { return message ? message->id : paged->summary.id; }
    std::size_t priority() const { return std::min<std::size_t>(message ? message->priority : paged->summary.priority, 9); }
    std::int64_t expires_ms() const { return message ? message->expires_ms : paged->summary.expires_ms; }
    std::int64_t timestamp_ms() const { return message ? message->timestamp_ms : paged->summary.timestamp_ms; }
    bool stored() const { return message ? message->stored() : paged->summary.persistent || paged->summary.spilled; }
    // What the entry counts in ready_bytes: the message's footprint, in memory or not.
    std::size_t footprint() const { return message ? message->footprint() : paged->summary.footprint; }
  };

  // A paged entry to read back: where it is (lane, seq) and what the store needs.
  struct PageRead {
    std::size_t lane = 0;
    std::uint64_t seq = 0;
    store::ReadItem item;
  };

  // Cold tails (docs/storage.md, "Cold tails"): the end of a priority lane of which the queue
  // keeps no per-message state, only how many messages it holds, what they weigh and where in
  // the store they start. Every live stored message of this queue and priority at or after
  // `from` that is not in memory here belongs to it; a scan reads it back.
  struct ColdTail {
    std::uint64_t count = 0;
    std::uint64_t bytes = 0;          // their footprints (depth and ready_bytes count them)
    store::Location from;             // where the next scan starts
    std::uint64_t drops = 0;          // the next ones read are dropped (overflow, purge)
    // The oldest timestamp known to be in it (the admin API's oldest message age): the
    // earliest that joined, then, once read from, the last message read. 0: unknown.
    std::int64_t oldest_ms = 0;
    bool scanning = false;            // a scan of this lane is out
    bool failed = false;              // a scan failed: no more reads until a restart
    bool lowered = false;             // `from` was lowered while the scan was out...
    store::Location lowered_to;       // ...to here
    // Persistent arrivals of this priority waiting for their location, then joining the tail
    // (they must not overtake it); released into the lane once the tail is empty.
    std::deque<Entry> held;
    bool active() const { return count != 0 || drops != 0; }
  };
  // A scan to issue: which lane, from where, how many, and the tail's epoch (a scan answering
  // after its tail was cut, by purge or delete, is dropped).
  struct ColdRead {
    std::size_t lane = 0;
    store::Location from;
    std::size_t max = 0;
    std::uint64_t epoch = 0;
  };
  // What a scan's answer did: messages now in memory (with their locations), messages to drop
  // (expired, or owed to an overflow or purge), and whether the count had to be corrected.
  struct ColdEntered {
    model::MessagePtr message;
    store::Location location;
    std::uint64_t seq = 0;  // its entry's, in the lane it was read for
  };
  struct ColdAnswer {
    std::vector<ColdEntered> entered;
    std::vector<Entry> expired;
    std::vector<store::Location> expired_at;  // one per expired entry: where it is stored
    std::vector<model::MessagePtr> dropped;
    std::vector<store::Location> dropped_at;  // one per dropped message
    std::uint64_t corrected = 0;  // messages counted that the store no longer had
    std::uint64_t unreadable = 0; // messages the store could not read back: out of the count
    bool emptied = false;         // the tail is gone (held arrivals released into the lane)
  };
  // A cut tail, for a delete: its messages are to be acked by scanning from `from`.
  struct ColdCut {
    std::size_t lane = 0;
    store::Location from;
    std::uint64_t count = 0;
  };

  struct Dispatch {
    ConsumerRef consumer;
    std::vector<Delivery> batch;
  };

  struct Outcome {
    std::vector<model::MessagePtr> removed;  // acked: gone for good (persist an ack record)
    std::vector<Entry> returned;      // nacked: the owner requeues or schedules them
    std::size_t unknown_tags = 0;     // tags the consumer does not hold
  };

  explicit Queue(std::string key, Matcher matcher = {}) : key_(std::move(key)), matcher_(std::move(matcher)) {}

  const std::string& key() const { return key_; }

  void enqueue(model::MessagePtr message);
  // A message from recovery: it keeps the delivery count it had before the restart.
  void restore(model::MessagePtr message, std::uint32_t delivery_count);
  // A message from recovery that came back as a summary only: it enters paged.
  void restore_paged(const store::MessageSummary& summary, store::Location location, std::uint32_t delivery_count);
  // Puts a returned entry back at its place (by arrival order within its priority).
  void requeue(Entry entry);

  // Paging (docs/storage.md, "Paging"). Runs on the owner, which keeps the store locations and
  // the memory accounting; the queue only moves entries between the two states.
  //
  // Where a ready message in memory is stored, or an invalid Location if it is not (yet).
  using Locator = std::function<store::Location(const model::Message&)>;
  // Told of each message just paged out; true: that is enough for now.
  using Enough = std::function<bool(const model::Message&)>;
  // Pages out ready entries in memory that `where` locates, the furthest from the head first
  // (lowest priority, newest), leaving the first `keep_head` entries in dispatch order alone,
  // until `enough` says so. Walks each lane from its tail back to its first paged entry, so a
  // call costs what arrived since the last one. Returns the messages it let go.
  std::vector<model::MessagePtr> page_out(std::size_t keep_head, const Locator& where,
                                          const Enough& enough);
  // The same for the given entries only (read back, then not taken): a selective consumer
  // refusing a paged backlog does not pull it into memory window after window.
  std::vector<model::MessagePtr> page_out_again(std::span<const PageRead> entries, std::size_t keep_head,
                                                const Locator& where, const Enough& enough);
  // The paged entries to read next, marked as being read: empty while a read is out, without
  // consumers, or while the head holds at least half a `window` of messages in memory ahead of
  // the first paged one. A selective dispatch that stopped at a paged entry reads from there.
  std::vector<PageRead> read_ahead(std::size_t window);
  // Every paged ready entry, left as it is (an operator's work reads them all back).
  std::vector<PageRead> paged_entries() const;
  // A read's answers, one per PageRead. Each returns false if the entry is no longer ready
  // here (taken by expiry, purge, overflow): the answer is then dropped.
  bool page_in(const PageRead& at, model::MessagePtr message);
  // A paged entry whose read failed, taken out of the ready messages (not of the store).
  std::optional<Entry> take_paged(const PageRead& at);
  // A read that did not happen (the store is closing): the entry stays paged, unmarked.
  void unmark_reading(const PageRead& at);
  // The read issued by read_ahead() has been answered (all its entries handled).
  void read_done() { reading_ = false; }
  bool reading() const { return reading_; }
  std::size_t paged() const { return paged_count_; }

  // Cold tails (queue_cold_tail.cpp). The owner calls these only for stored queues of a store
  // that can scan; other queues never have one.
  //
  // Moves ready persistent entries that `where` locates out of memory into their lanes' cold
  // tails, the furthest from the head first, leaving `keep_head` entries alone, until `enough`.
  // Returns the messages it let go, with their locations. An entry that every consumer's
  // selector has refused is paged in place instead (`paged`): gone cold, it would come back with
  // a new place in the lane and be evaluated, and read, again and again.
  struct WentCold {
    model::MessagePtr message;
    store::Location location;
    bool paged = false;
  };
  std::vector<WentCold> go_cold(std::size_t keep_head, const Locator& where, const Enough& enough);
  // Whether lane `priority` has a cold tail that persistent arrivals must wait behind.
  bool holding(std::size_t priority) const;
  // A held arrival, located at last: it leaves memory and joins the tail. Null if `id` is not
  // held in that lane.
  model::MessagePtr join_cold(std::size_t priority, const model::MessageId& id, store::Location at);
  // A message known only by its summary (recovery) or whose message is let go (restore of a
  // full message behind a cold tail) joins the tail of its lane.
  void add_cold(std::size_t priority, std::uint32_t footprint, store::Location at, std::int64_t timestamp_ms = 0);
  // A run of `count` stored messages weighing about `bytes`, at or after `from`, joins the tail
  // of its lane (a store::RecoveredTail at a restart). Commutes with add_cold().
  void add_cold_run(std::size_t priority, std::uint64_t count, std::uint64_t bytes, store::Location from);
  // The scan to issue next, marked out: the highest lane with a tail whose in-memory head (with
  // the lanes above) is under half a window; only with consumers, unless `all` (an operator's
  // work reads the whole tail) or the lane owes drops.
  std::optional<ColdRead> cold_read(std::size_t window, bool all);
  // A scan's answer. `skip`: ids in memory in this queue (a scan may return them).
  ColdAnswer cold_scanned(const ColdRead& read, store::ScanResult result,
                          const std::function<bool(const model::MessageId&)>& skip, std::int64_t now_ms);
  // A scan that failed: `stop` (corrupt data, I/O error) ends the tail's reads, its count kept
  // (the messages stay in the store; a restart reads them) and held arrivals released; else
  // (the store is closing) it is only unmarked.
  void cold_unread(const ColdRead& read, bool stop);
  // Up to `max` of the tails' messages (lowest priority first) to be dropped when read: an
  // unfiltered purge. Returns how many.
  std::uint64_t drop_cold(std::uint64_t max);
  // Every tail, cut from the queue (a delete): held arrivals go into their lanes.
  std::vector<ColdCut> cut_cold();
  std::uint64_t cold() const { return cold_count_; }
  // Some tail still has messages to read or drops owed (a failed tail does not count).
  bool cold_active() const;
  bool cold_reading() const;
  const ColdTail* cold_tail(std::size_t priority) const {
    return cold_ ? &(*cold_)[std::min<std::size_t>(priority, 9)] : nullptr;
  }

  void add_consumer(ConsumerRef consumer);
  // Removes the consumer and hands back its unacked deliveries, flagged redelivered, in arrival
  // order; the owner requeues or schedules them. Empty if the consumer is unknown.
  std::vector<Entry> remove_consumer(ConsumerId id, bool* found = nullptr);
  bool has_consumer(ConsumerId id) const;
  // The consumer gets no credit from now on (its unacked deliveries stay its own).
  void pause_consumer(ConsumerId id);

  Outcome ack(ConsumerId id, std::span<const std::uint64_t> tags);
  Outcome nack(ConsumerId id, std::span<const std::uint64_t> tags);

  // Hands ready messages to consumers with credit. Expired messages found on the way are taken
  // out and reported in `expired`.
  std::vector<Dispatch> dispatch(std::int64_t now_ms, std::vector<Entry>& expired);

  // Ready messages that have expired by `now_ms`, taken out (the sweeper).
  std::vector<Entry> take_expired(std::int64_t now_ms);
  // The oldest ready message of the lowest priority, taken out (overflow drop-oldest).
  bool take_oldest(Entry& out);
  // Every ready and unacked message, taken out (the queue is being deleted).
  std::vector<Entry> take_all();
  // Every ready and unacked message, left in place (a subscription starts or stops being stored,
  // a browse): paged ones have no message.
  void for_each(const std::function<void(const Entry&)>& visit) const;

  std::size_t depth() const { return ready_count_ + cold_count_ + held_count_; }
  std::size_t ready_bytes() const { return ready_bytes_ + cold_bytes_ + held_bytes_; }
  std::size_t unacked() const;
  std::size_t consumer_count() const { return consumers_.size(); }
  std::uint64_t enqueued_total() const { return next_seq_ - 1; }
  // The timestamp of the ready message that arrived first, 0 if none is ready: each lane is in
  // arrival order, so it is the earliest of ten fronts (the admin API's oldest message age).
  std::int64_t oldest_ready_timestamp_ms() const;
  // Last time a consumer attached, acked or was handed a message; or the queue was created.
  std::int64_t last_activity_ms() const { return last_activity_ms_; }
  void touch(std::int64_t now_ms) { last_activity_ms_ = now_ms; }

 private:
  struct ConsumerState {
    ConsumerRef ref;
    std::uint64_t next_tag = 1;
    UnackedLog<Entry> unacked;
    // Per priority lane: every ready entry with a smaller seq was offered to this consumer's
    // selector and refused, so dispatch does not evaluate it again (a consumer that matches none
    // of a large backlog would otherwise rescan it on every send)...
    std::array<std::uint64_t, 10> refused_below{};
    // ...except these: entries that returned to the queue below refused_below (nack, redelivery,
    // a consumer leaving) and were not offered to this consumer since. Past kMaxReturned,
    // refused_below is lowered instead.
    struct Returned {
      std::size_t lane;
      std::uint64_t seq;
    };
    static constexpr std::size_t kMaxReturned = 64;
    std::vector<Returned> returned;
    bool has_credit() const { return unacked.size() < ref.prefetch; }
    bool refused(std::size_t lane, std::uint64_t seq) const;
  };

  void push_ready(Entry entry);
  void push_back_ready(Entry entry);
  void note_expiry(const Entry& e) {
    const auto at = e.expires_ms();
    if (at != 0 && at < next_expiry_ms_) next_expiry_ms_ = at;
  }
  // The ready entry (lane, seq), or null.
  Entry* find_ready(std::size_t lane, std::uint64_t seq);
  // Pages `e` out (it is in memory, `at` valid): returns its message.
  model::MessagePtr page(Entry& e, store::Location at);
  void take_out(Entry& e) {
    ready_bytes_ -= e.footprint();
    --ready_count_;
    if (e.is_paged()) --paged_count_;
  }
  ConsumerState* find(ConsumerId id);
  bool accepts(const ConsumerState& c, const model::Message& m) const;
  // Picks the consumer for `m` round-robin among those with credit that accept it; n if none.
  std::size_t choose(const model::Message& m) const;
  // The same for an entry of lane `lane`, skipping consumers known to have refused it.
  std::size_t choose_selective(const Entry& e, std::size_t lane) const;
  void dispatch_lane(std::size_t lane, std::int64_t now_ms, std::vector<Entry>& expired_out,
                     std::vector<Dispatch>& out, std::vector<int>& batch_of);
  // Offers lane[i] in dispatch_lane_selective: delivers it or drops it expired (taken), leaves
  // it, refused by every consumer with credit (refused), or stops at it, paged (paged).
  enum class Offered { taken, refused, paged };
  Offered offer(std::size_t lane, std::size_t i, std::int64_t now_ms, std::vector<Entry>& expired_out,
             std::vector<Dispatch>& out, std::vector<int>& batch_of, std::size_t& first_hole);
  // The smallest seq >= `from` in lane `lane` that some consumer with credit has not refused.
  std::uint64_t next_unrefused(std::size_t lane, std::uint64_t from) const;
  void dispatch_lane_selective(std::size_t lane, std::int64_t now_ms, std::vector<Entry>& expired_out,
                               std::vector<Dispatch>& out, std::vector<int>& batch_of);
  bool any_credit() const;
  void deliver_to(std::size_t idx, Entry e, std::vector<Dispatch>& out, std::vector<int>& batch_of);

  std::string key_;
  Matcher matcher_;
  // A lane of one priority, allocated on first use: an empty std::deque already holds ~600
  // bytes, so ten eager ones made every queue cost ~6 KiB before its first message.
  using Lane = std::deque<Entry>;
  Lane& lane_for(std::size_t priority);

  std::array<std::unique_ptr<Lane>, 10> ready_;  // index = priority; null until used
  std::size_t ready_count_ = 0;
  std::size_t ready_bytes_ = 0;
  // No ready message expires before this (a lower bound: messages leaving do not raise it, the
  // next sweep that walks does). kNoExpiry: none has an expiry.
  static constexpr std::int64_t kNoExpiry = std::numeric_limits<std::int64_t>::max();
  std::int64_t next_expiry_ms_ = kNoExpiry;
  std::uint64_t next_seq_ = 1;
  // By pointer: a consumer leaving shifts pointers, not their unacked logs (each move of one
  // allocated), so a queue thousands consume from lets them go in linear time.
  std::vector<std::unique_ptr<ConsumerState>> consumers_;
  std::size_t round_robin_ = 0;
  std::size_t selective_consumers_ = 0;
  std::int64_t last_activity_ms_ = 0;
  std::size_t paged_count_ = 0;  // ready entries that are paged
  bool reading_ = false;         // a read_ahead() read is out
  // Cold tails, allocated when the first lane goes cold; totals across lanes.
  std::unique_ptr<std::array<ColdTail, 10>> cold_;
  ColdTail& cold_for(std::size_t priority);
  // Held arrivals into their lane (the tail is empty or stopped).
  void release_held(std::size_t priority);
  // One message of the lane's tail, owed as a drop (overflow drop-oldest).
  bool drop_cold_one(std::size_t priority) { return cold_ && holding(priority) && drop_cold_lane(priority, 1) == 1; }
  std::uint64_t drop_cold_lane(std::size_t priority, std::uint64_t max);
  std::uint64_t cold_count_ = 0;
  std::uint64_t cold_bytes_ = 0;
  std::size_t held_count_ = 0;
  std::size_t held_bytes_ = 0;
  std::uint64_t cold_epoch_ = 1;
  bool stalled_ = false;         // dispatch stopped at a paged entry: at (stall_lane_, stall_seq_)
  std::size_t stall_lane_ = 0;
  std::uint64_t stall_seq_ = 0;
};

}  // namespace carrier::core
