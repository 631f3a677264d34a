#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <spdlog/logger.h>

#include "store/encoded_batch.hpp"
#include "store/group_writer.hpp"
#include "store/store.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace carrier::store::sqlite {

// data_dir/carrier.sqlite (plus its -wal file while open).
std::filesystem::path database_path(const std::filesystem::path& data_dir);

// The SQLite backend: one database file in WAL mode, held with an exclusive lock, tables
// `queues` and `messages` (docs/storage.md, "SQLite"). An ack deletes the message's row; a
// delivered record updates its delivery_count; a message record inserts a row (or replaces the
// row of the same queue and id, which then moves to the end of the append order).
//
// Threads. open/recover/start/close run on the broker's start-up/shutdown thread; append() runs
// on any shard and encodes the batch there. One writer thread (`carrier-sqlite`) takes every
// queued batch at once, writes them in one transaction with prepared statements, commits
// (with synchronous = full, the WAL is synced), then runs the callbacks in append order. After
// start() only the writer touches the connection.
//
// A group is folded first (GroupChanges): one net change per queue and message, so a message
// stored and acked in the same group is never inserted.
//
// Failure. A failed transaction is rolled back and every batch of its group fails with
// Errc::io_error (unavailable when the file is locked); nothing of it stays. The writer then
// closes the connection and opens it again for the next group, so the store recovers by itself
// once the disk has room again. A database file deleted or replaced while open fails every
// group (SQLite would write on into the unlinked file) until it is back, never recreated.
class SqliteStore final : public Store {
 public:
  struct Stats {
    std::uint64_t batches = 0;          // reported through a callback, whatever the outcome
    std::uint64_t failed_batches = 0;
    std::uint64_t transactions = 0;     // group commits attempted
    std::uint64_t reconnects = 0;       // connections reopened after a failure
  };

  explicit SqliteStore(Options options);
  ~SqliteStore() override;

  Status open() override;
  Status recover(const std::function<void(RecoveredMessage)>& visit) override;
  void start() override;
  void append(Batch batch, DurableCallback on_durable) override;
  void append_located(Batch batch, LocatedCallback on_durable) override;
  // Reads run on the writer thread, between group commits (the exclusive lock admits no second
  // connection): a read waits for the group commit in progress.
  void read(std::string queue, std::vector<ReadItem> items, ReadCallback done) override;
  // Like read(): on the writer thread, after the group it arrives with (so an ack appended
  // before it is written first), one range of the messages_by_lane index.
  bool can_scan() const override { return true; }
  void scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) override;
  void close() override;

  Stats stats() const;

 private:
  using Pending = GroupWriter::Pending;
  enum class State { created, opened, failed, running, closed };

  // Any thread that owns the connection at the time (start-up, then the writer).
  Status connect();
  void disconnect();
  Status check_identity() const;
  Status load_state();
  Result<std::int64_t> queue_id(const std::string& key, bool create);
  Status write_group(std::vector<Pending>& group);
  Status write_upsert(const GroupChanges::Upsert& u);
  Status write_key(sqlite3_stmt* s, const GroupChanges::Key& key, std::optional<std::uint32_t> count,
                   std::string_view what);
  Status execute(sqlite3_stmt* s, std::string_view what);
  Result<model::MessagePtr> read_one(const std::string& queue, const ReadItem& item);
  Result<ScanResult> scan_rows(const std::string& queue, std::uint8_t priority, Location from, std::size_t max);

  // Writer thread.

  const Options options_;
  const std::filesystem::path path_;
  const std::string where_;  // the path, for messages
  const std::shared_ptr<spdlog::logger> log_;
  State state_ = State::created;
  std::optional<Error> failure_;  // why open() failed

  // The connection and what the writer knows about the tables (owned by the writer once it runs).
  sqlite3* db_ = nullptr;
  struct Statements;
  std::unique_ptr<Statements> stmts_;
  std::unordered_map<std::string, std::int64_t> queues_;  // key -> queues.id
  std::int64_t next_queue_id_ = 1;
  struct FileIdentity {
    std::uint64_t dev, ino;
  };
  std::optional<FileIdentity> identity_;  // the file open() opened (or created)
  std::int64_t next_seq_ = 1;

  std::atomic<std::uint64_t> reconnects_{0};
  // Last: destroyed first, so its thread is gone before what write_group uses.
  GroupWriter writer_{"carrier-sqlite", "sqlite store " + where_, [this](std::vector<Pending>& group) {
                        Status st = write_group(group);
        if (!st) log_->warn("sqlite: group commit of {} batches failed: {}", group.size(), st.error().detail);
                        return st;
                      }};
};

}  // namespace carrier::store::sqlite
