#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/commit_queue.hpp"
#include "store/store.hpp"

namespace carrier::store::memory {

// No durability: for tests and non-persistent deployments. It recovers nothing; it honours the
// Store contract, so the core cannot tell it from a durable backend except by speed. To answer
// read() and scan() it keeps a reference to each live message appended with append_located()
// (the same immutable Message the broker holds, so no body is copied) until its ack, with its
// latest delivery count; location.file is a sequence number of its own, so store order is
// append order. A plain append() keeps nothing, as before (scan() cannot see those messages).
//
// Threads: append() and read() from any shard queue their work; one thread of its own applies
// the batches, answers the reads and runs the callbacks, in the order they were queued, like
// the log store's writer. Running them inline would be simpler but would break the ordering
// contract for concurrent appenders (two shards could see their callbacks swapped) and run the
// callback on the appending shard's stack, where a caller holding its own lock could deadlock
// on re-entry. That thread alone touches the table of live messages.
class MemoryStore final : public Store {
 public:
  MemoryStore() = default;
  ~MemoryStore() override;

  Status open() override;
  Status recover(const std::function<void(RecoveredMessage)>& visit) override;
  void start() override;
  void append(Batch batch, DurableCallback on_durable) override;
  void append_located(Batch batch, LocatedCallback on_durable) override;
  void read(std::string queue, std::vector<ReadItem> items, ReadCallback done) override;
  // Runs on the store's thread in queue order: an ack appended before it is applied first.
  bool can_scan() const override { return true; }
  void scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) override;
  void close() override;

 private:
  // One queued piece of work: a batch to apply (with one of the two callbacks), a read or a scan.
  struct Work {
    Batch batch;
    DurableCallback durable;
    LocatedCallback located;
    bool is_read = false;
    std::string queue;  // read
    std::vector<ReadItem> items;
    ReadCallback read_done;
    bool is_scan = false;  // queue, and:
    std::uint8_t priority = 0;
    Location from;
    std::size_t max = 0;
    ScanCallback scan_done;
  };
  struct Stored {
    std::string queue;
    model::MessagePtr message;
    std::uint32_t delivery_count = 0;
  };

  void run();
  void perform(Work& w);
  void perform_scan(Work& w);
  void forget(std::unordered_map<std::string, std::uint64_t>::iterator live);

  CommitQueue<Work> queue_;
  std::thread thread_;
  bool closed_ = false;

  // The store's thread only.
  std::uint64_t next_seq_ = 1;
  std::unordered_map<std::uint64_t, Stored> stored_;       // location.file -> message
  std::unordered_map<std::string, std::uint64_t> live_;    // queue + '\0' + id bytes -> seq
  // The seqs of each queue's live messages of one priority, for scan(): queue + '\0' + priority.
  std::unordered_map<std::string, std::set<std::uint64_t>> lanes_;
};

}  // namespace carrier::store::memory
