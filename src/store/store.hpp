#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"
#include "store/record.hpp"

namespace carrier::store {

// Called once a batch is durable (or failed). Runs on: the store's writer thread. It must not
// block: post the result back to the shard that asked.
using DurableCallback = std::function<void(Status)>;

// Like DurableCallback, and on success also says where each record of the batch landed: one
// Location per record, in batch order, valid for message records only (acks and delivered
// records get Location{}). A message acked again within the same group commit gets Location{}
// from the SQL backends (no row was written) and a location that reads not_found from the
// journal. On failure the vector is empty.
using LocatedCallback = std::function<void(Status, std::vector<Location>)>;

// One message to read back: its id and where append() or recover() said it landed.
struct ReadItem {
  model::MessageId id;
  Location location;
};

// One answer per ReadItem, in the same order: the message, or
//   Errc::not_found     nothing live there: acked (or replaced) and removed, segment reclaimed,
//                       never stored, or the location names another queue or id;
//   Errc::corrupt_data  the stored bytes fail their checksum or do not decode;
//   Errc::io_error      the read itself failed;
//   Errc::shutting_down the store is closed.
// Runs on: one of the store's own threads (the base class's default answers at once, on the
// caller's); it must not block.
using ReadCallback = std::function<void(std::vector<Result<model::MessagePtr>>)>;

// One live message a scan found, read in full.
struct ScannedMessage {
  model::MessagePtr message;
  Location location;                 // where it is stored (what append_located() reported)
  std::uint32_t delivery_count = 0;  // its latest delivered record's count, 0 if none
};

// What one scan() found. `next` is where the following scan of the same queue and priority
// starts: past every record this one examined, so a record appended after this scan was called
// is never behind it. `exhausted`: nothing more was stored at or after `next` when the scan
// ran (a later append may add more).
struct ScanResult {
  std::vector<ScannedMessage> messages;  // in store order, each at or after `from`
  Location next;
  bool exhausted = false;
  // Live messages of the queue and priority in the range examined whose stored bytes fail their
  // checksum or do not decode: skipped (each logged by the store), not returned, left stored.
  // The scan goes on past them, so one damaged frame holds back only its own messages.
  std::uint64_t unreadable = 0;
};
using ScanCallback = std::function<void(Result<ScanResult>)>;

enum class RecoveryMode { strict, skip_corrupt };

// A lane's run of live messages that recover() hands back as one piece instead of one
// RecoveredMessage each: every live message of `queue` whose priority is `priority`, stored at or
// after `from`, except those recover() also visits one by one (by their locations the caller
// knows them). The caller keeps it as a cold tail and reads it back with scan(); it must ack
// those messages with their StoredRef. Only from a backend that can_scan(), only for queues
// summary_only names, only when RecoverOptions::tail is set, and every tail before the first
// RecoveredMessage. It is what makes start-up independent of the backlog (the journal's
// live-set checkpoint: docs/storage.md, "Live-set checkpoint").
struct RecoveredTail {
  std::string queue;
  std::uint8_t priority = 4;
  Location from;              // at or before its first live message
  std::uint64_t count = 0;    // live messages in it: exact
  std::uint64_t bytes = 0;    // their footprints' sum: may be an estimate
};

// What the caller of recover() lets the backend leave in the store.
struct RecoverOptions {
  // True for a queue whose messages may come back as summaries only (RecoveredMessage::message
  // null), to be read back by location when needed. Unset: every message is read in full.
  std::function<bool(std::string_view queue)> summary_only;
  // Set: the backend may hand back runs of summary_only queues' live messages as tails.
  std::function<void(RecoveredTail)> tail;
};

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
  // log, sqlite: free space on data_dir's disk under this holds persistent publishers; 0 = off.
  // One default journal segment: the room the journal needs to roll once more.
  std::uint64_t disk_free_limit_bytes = 64ull << 20;
};

// The one asynchronous persistence interface. Lifecycle: open() → recover() → start() →
// (append() | read())* → close(). open/recover/start/close are called by the thread that runs
// the broker's start-up and shutdown; append and read are thread-safe and called from any shard. A backend writes
// batches in the order append() was called and reports each one through its callback, in that
// order, from its own writer thread (group commit: many batches, one sync).
class Store {
 public:
  virtual ~Store() = default;

  virtual Status open() = 0;
  // Visits every live message in append order. Called once, before start().
  virtual Status recover(const std::function<void(RecoveredMessage)>& visit) = 0;
  // recover() that may hand back summaries for the queues options.summary_only names. The
  // default reads every message in full.
  virtual Status recover(const RecoverOptions& options, const std::function<void(RecoveredMessage)>& visit) {
    (void)options;
    return recover(visit);
  }
  virtual void start() = 0;
  virtual void append(Batch batch, DurableCallback on_durable) = 0;
  // append() that reports locations. The default (a store that keeps no locations, such as a
  // test double) reports Location{} for every record, so the caller keeps its messages.
  // Acks and delivered records of a message whose location the caller was told (here, by
  // recover() or by scan()) should carry it (Record::stored): a backend may keep nothing per
  // message for such messages. The journal finds any other by queue and id, at the cost, for
  // one recovered from its checkpoint, of a full replay at the next start.
  virtual void append_located(Batch batch, LocatedCallback on_durable);
  // Reads back messages of `queue` stored at the given locations, asynchronously, as one batch:
  // `done` runs once, with one answer per item. Thread-safe, from any shard; reads queued before
  // start() are answered after it. The journal reads on a reader thread of its own, so a read
  // never waits behind a group commit's fsync; the SQL backends read on their writer thread,
  // between group commits (docs/storage.md, "Read path"). The default answers Errc::not_found.
  virtual void read(std::string queue, std::vector<ReadItem> items, ReadCallback done);
  // Reads the live messages of `queue` whose priority is `priority`, stored at or after `from`
  // (Location{}: from the first), in store order, up to `max` of them, asynchronously: `done`
  // runs once, on one of the store's threads, and must not block. It is how the core reads back
  // a queue's cold tail, of which it keeps no per-message state (docs/storage.md, "Cold tails").
  //   - Store order is Location order (Location::operator<=>), which is append order in every
  //     backend.
  //   - "Live": stored by append() and not removed by an ack appended before scan() was called,
  //     durable or not yet, so a message whose ack is on its way is never handed out again. A
  //     message appended but not yet durable is not seen.
  //   - A scan may examine many records and return fewer than `max` (other queues' and other
  //     priorities' records are skipped), even none, without being exhausted: call again from
  //     `next`.
  // Errors: Errc::io_error if the range cannot be read (`next` is then lost: the caller stops
  // scanning that tail), Errc::corrupt_data if what says where the records are (the journal's
  // segment catalog) cannot be read, Errc::shutting_down once closed. A damaged message is no
  // error: it is counted in `unreadable` and skipped.
  // can_scan() says whether a backend implements it; the default answers Errc::unavailable.
  virtual bool can_scan() const { return false; }
  virtual void scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done);
  // Writes and syncs everything appended so far, runs the callbacks, stops the writer thread.
  // append() after close() fails its callback with Errc::shutting_down.
  virtual void close() = 0;
};

inline void Store::append_located(Batch batch, LocatedCallback on_durable) {
  const std::size_t records = batch.size();
  append(std::move(batch), [records, done = std::move(on_durable)](Status st) {
    if (!done) return;
    std::vector<Location> nowhere(st ? records : 0);
    done(std::move(st), std::move(nowhere));
  });
}

inline void Store::read(std::string queue, std::vector<ReadItem> items, ReadCallback done) {
  std::vector<Result<model::MessagePtr>> answers;
  answers.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    answers.emplace_back(unexpected(Errc::not_found, "this store keeps no messages to read in " + queue));
  }
  if (done) done(std::move(answers));
}

inline void Store::scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) {
  (void)priority;
  (void)from;
  (void)max;
  if (done) done(unexpected(Errc::unavailable, "this store cannot scan " + queue));
}

// Builds the backend named by options.kind, or an error naming the unknown kind.
Result<std::unique_ptr<Store>> make_store(const Options& options);

}  // namespace carrier::store
