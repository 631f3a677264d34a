#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "base/result.hpp"
#include "store/record.hpp"

namespace carrier::store {

// Called once a batch is durable (or failed). Runs on: the store's writer thread. It must not
// block: post the result back to the shard that asked.
using DurableCallback = std::function<void(Status)>;

enum class RecoveryMode { strict, skip_corrupt };

// sqlite: PRAGMA synchronous. full syncs the WAL at every commit (a confirmed message survives
// a power cut); normal syncs only at checkpoints (survives a process crash, not a power cut).
enum class SqliteSynchronous { off, normal, full };

struct Options {
  std::string kind = "log";                   // log | sqlite | postgres | memory
  std::filesystem::path data_dir = "carrier-data";
  std::uint64_t segment_bytes = 64ull << 20;  // log: roll to a new segment past this size
  bool fsync = true;                          // log: fdatasync each group commit
  RecoveryMode recovery = RecoveryMode::strict;
  SqliteSynchronous sqlite_synchronous = SqliteSynchronous::full;  // sqlite: data_dir/carrier.sqlite
  std::string postgres_url;                   // postgres: libpq URI or key=value string (required)
  std::string postgres_schema = "carrier";    // postgres: the schema holding Carrier's tables
  // log, sqlite: free space on data_dir's disk under this holds persistent publishers; 0 = off
  std::uint64_t disk_free_limit_bytes = 1ull << 30;
};

// The one asynchronous persistence interface. Lifecycle: open() → recover() → start() →
// append()* → close(). open/recover/start/close are called by the thread that runs the broker's
// start-up and shutdown; append is thread-safe and called from any shard. A backend writes
// batches in the order append() was called and reports each one through its callback, in that
// order, from its own writer thread (group commit: many batches, one sync).
class Store {
 public:
  virtual ~Store() = default;

  virtual Status open() = 0;
  // Visits every live message in append order. Called once, before start().
  virtual Status recover(const std::function<void(RecoveredMessage)>& visit) = 0;
  virtual void start() = 0;
  virtual void append(Batch batch, DurableCallback on_durable) = 0;
  // Writes and syncs everything appended so far, runs the callbacks, stops the writer thread.
  // append() after close() fails its callback with Errc::shutting_down.
  virtual void close() = 0;
};

// Builds the backend named by options.kind, or an error naming the unknown kind.
Result<std::unique_ptr<Store>> make_store(const Options& options);

}  // namespace carrier::store
