#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/bench_options.hpp"

namespace carrier::cli::bench {

// The first kStampSize bytes of every message body, little-endian:
//   0  "CBN1"  magic
//   4  u32     run id (a random number per run: messages of other runs are ignored)
//   8  u32     producer index
//  12  u32     reserved (0)
//  16  u64     sequence number within the producer, from 0
//  24  u64     send time, steady-clock nanoseconds (the intended time when --rate is set)
// In the body, not in headers, so the same stamp works over STOMP and MQTT 3.1.1.
struct Stamp {
  std::uint32_t run_id = 0;
  std::uint32_t producer = 0;
  std::uint64_t sequence = 0;
  std::uint64_t send_ns = 0;
};

// Writes the stamp over the first kStampSize bytes of `body` (which must be that long).
void write_stamp(char* body, const Stamp& stamp);
// The stamp at the front of `body`; nullopt when too short or not a stamp.
std::optional<Stamp> read_stamp(std::string_view body);

// Which (producer, sequence) pairs one consumer received, as a bitmap per producer: marks
// duplicates as they arrive and counts what is missing at the end.
//
// Runs on: one thread (the consumer's I/O thread); merge and the counts after it stopped.
class Ledger {
 public:
  explicit Ledger(std::uint32_t producers = 0);

  // Marks the pair; false when it was already marked (a duplicate) or the producer is unknown.
  bool record(std::uint32_t producer, std::uint64_t sequence);

  std::uint64_t deliveries() const { return deliveries_; }  // every record() of a known producer
  std::uint64_t duplicates() const { return duplicates_; }
  std::uint64_t unknown_producer() const { return unknown_; }
  std::uint64_t distinct() const;
  // Pairs with sequence < sent[producer] that were never marked.
  std::uint64_t missing(const std::vector<std::uint64_t>& sent) const;
  // Pairs marked with sequence >= sent[producer]: received but never sent (a bug somewhere).
  std::uint64_t beyond(const std::vector<std::uint64_t>& sent) const;

  // Adds another consumer's marks to these, for consumers sharing a queue: a pair both marked
  // is a duplicate (the queue delivered it twice).
  void merge(const Ledger& other);

 private:
  std::vector<std::vector<std::uint64_t>> bits_;  // per producer, bit = sequence
  std::uint64_t deliveries_ = 0;
  std::uint64_t duplicates_ = 0;
  std::uint64_t unknown_ = 0;
};

// Loss and duplicates over all consumers. Queue: the consumers share the messages, so every sent
// message must arrive exactly once at one of them. Topic: every consumer must get each one once.
struct Accounting {
  std::uint64_t expected = 0;    // deliveries a perfect broker makes
  std::uint64_t deliveries = 0;  // deliveries of this run's messages, duplicates included
  std::uint64_t missing = 0;
  std::uint64_t duplicates = 0;
  std::uint64_t beyond = 0;      // received sequence numbers never sent
};
Accounting account(Kind kind, const std::vector<Ledger>& consumers, const std::vector<std::uint64_t>& sent);

}  // namespace carrier::cli::bench
