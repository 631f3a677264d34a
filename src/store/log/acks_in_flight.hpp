#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/string_hash.hpp"
#include "model/message_id.hpp"
#include "store/record.hpp"

namespace carrier::store::log {

// The acks appended to the journal and not yet applied to its reclaimer (queued for the writer,
// or in the group it is writing), so a scan hides their messages at once: Store::scan's
// contract counts an ack from the moment append() is called, durable or not. A counted set of
// (queue, id); a batch without acks costs nothing here.
//
// The order that makes it exact: the appender adds a batch's acks before queueing it; the writer
// removes a group's acks only after applying the group to the reclaimer; a scan asks here first
// and the reclaimer second. So an ack appended before a scan was called is seen by one of the
// two, whenever the scan asks.
//
// Per queue a set of ids: an ack costs one lookup of its queue's name (no key built, nothing
// allocated once the queue is known) and one of its id; a scan looks its queue up once per
// chunk, then only ids. A queue's set goes when its last ack does.
// Runs on: add from any appending thread, remove on the writer thread, hides on the reader; its
// own mutex, held for the map operations only (never with another lock, never across I/O).
class AcksInFlight {
 public:
  void add(const Batch& batch);
  void remove(const Batch& batch);
  // hidden[i] = true for each ids[i] with an ack of `queue` in flight.
  void hides(std::string_view queue, const std::vector<model::MessageId>& ids, std::vector<bool>& hidden) const;
  // Distinct (queue, id) pairs with an ack in flight.
  std::size_t size() const;

 private:
  static bool has_ack(const Batch& batch);

  using Ids = std::unordered_map<model::MessageId, std::uint32_t>;  // id -> acks queued

  mutable std::mutex mutex_;
  std::unordered_map<std::string, Ids, StringHash, std::equal_to<>> acks_;
  std::size_t pairs_ = 0;
};

}  // namespace carrier::store::log
