#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/logger.h>

#include "store/encoded_batch.hpp"
#include "store/group_writer.hpp"
#include "store/postgres/pg_connection.hpp"
#include "store/postgres/postgres_schema.hpp"
#include "store/store.hpp"

namespace carrier::store::postgres {

// The PostgreSQL backend: tables `queues` and `messages` in Options::postgres_schema, the same
// shape as the SQLite store's (docs/storage.md, "PostgreSQL"). An ack deletes the row, a
// delivered record updates delivery_count, a message record upserts (the same queue and id
// again replaces the row and moves it to the end of the append order).
//
// Threads. open/recover/start/close run on the broker's start-up/shutdown thread; append() runs
// on any shard and encodes the batch there. One writer thread (`carrier-postgres`) owns the
// connection after start(): it takes every queued batch at once and sends the group as one
// transaction in libpq pipeline mode, then runs the callbacks in append order. The group is
// folded first (GroupChanges: one net change per queue and message) and sent as a few
// set-based statements whose rows are array parameters: BEGIN, new queues, upserts, deletes,
// delivery counts, COMMIT, one round trip; a message stored and acked within one group is
// never inserted.
//
// One broker per schema: a session advisory lock on the schema's name is taken with the
// connection (and again after every reconnect); a second broker fails with Errc::unavailable.
//
// Failure. When the server goes away, the group in flight and every append until a reconnect
// succeeds fail with Errc::unavailable; nothing is reported durable that was not committed.
// Reconnects happen on the writer thread when a group arrives, no more often than a back-off
// that doubles from 100 ms to 2 s. A group that fails because a connection idle since the last
// group turned out dead (the server restarted meanwhile) is retried once on a new connection:
// every statement is idempotent under replay, so a commit whose answer was lost does no harm.
class PostgresStore final : public Store {
 public:
  struct Stats {
    std::uint64_t batches = 0;          // reported through a callback, whatever the outcome
    std::uint64_t failed_batches = 0;
    std::uint64_t transactions = 0;     // group commits attempted
    std::uint64_t reconnects = 0;       // connections made after the first
  };

  explicit PostgresStore(Options options);
  ~PostgresStore() override;

  Status open() override;
  Status recover(const std::function<void(RecoveredMessage)>& visit) override;
  void start() override;
  void append(Batch batch, DurableCallback on_durable) override;
  void append_located(Batch batch, LocatedCallback on_durable) override;
  // Reads run on the writer thread, on its connection, between group commits.
  void read(std::string queue, std::vector<ReadItem> items, ReadCallback done) override;
  // Like read(): on the writer thread, on its connection, one range of messages_by_lane.
  bool can_scan() const override { return true; }
  void scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) override;
  void close() override;

  Stats stats() const;

  static constexpr std::chrono::milliseconds kFirstBackoff{100};
  static constexpr std::chrono::milliseconds kMaxBackoff{2000};
  // No progress on the socket for this long while a group is in flight: the server is gone.
  static constexpr std::chrono::milliseconds kIdleTimeout{30000};

 private:
  using Pending = GroupWriter::Pending;
  enum class State { created, opened, failed, running, closed };

  // Whichever thread owns the connection (start-up, then the writer).
  Status connect();
  Status load_state();
  std::int64_t queue_id(const std::string& key, bool create, ArrayParam& added_ids, ArrayParam& added_keys);

  // Writer thread.
  Status write_group(std::vector<Pending>& group);
  Status attempt(std::vector<Pending>& group);
  Status reconnect();
  std::vector<Result<model::MessagePtr>> read_rows(const std::string& queue, const std::vector<ReadItem>& items);
  Result<ScanResult> scan_rows(const std::string& queue, std::uint8_t priority, Location from, std::size_t max);

  const Options options_;
  const std::string schema_;
  const std::shared_ptr<spdlog::logger> log_;
  State state_ = State::created;
  std::optional<Error> failure_;  // why open() failed

  PgConnection conn_;
  bool lock_refused_ = false;  // the last connect() found the advisory lock held
  std::unordered_map<std::string, std::int64_t> queues_;  // key -> queues.id
  std::int64_t next_queue_id_ = 1;
  std::int64_t next_seq_ = 1;
  std::chrono::steady_clock::time_point next_attempt_{};
  std::chrono::milliseconds backoff_{0};
  std::optional<Error> last_connect_error_;

  std::atomic<std::uint64_t> reconnects_{0};
  // Last: destroyed first, so its thread is gone before what write_group uses.
  GroupWriter writer_{"carrier-postgres", "postgres store", [this](std::vector<Pending>& group) {
                        Status st = write_group(group);
                        return st;
                      }};
};

}  // namespace carrier::store::postgres
