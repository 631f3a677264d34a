#include "store/sqlite/sqlite_store.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <system_error>
#include <utility>

#include "base/logging.hpp"
#include "store/message_codec.hpp"
#include "store/sqlite/sqlite_schema.hpp"

namespace carrier::store::sqlite {

namespace {

constexpr const char* kFileName = "carrier.sqlite";
// Spilled messages deleted at recovery per statement.
constexpr std::size_t kDeleteChunk = 10'000;

const char* synchronous_pragma(SqliteSynchronous s) {
  switch (s) {
    case SqliteSynchronous::off: return "PRAGMA synchronous = OFF";
    case SqliteSynchronous::normal: return "PRAGMA synchronous = NORMAL";
    case SqliteSynchronous::full: return "PRAGMA synchronous = FULL";
  }
  return "PRAGMA synchronous = FULL";
}

Errc errc_of(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Errc::unavailable;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB: return Errc::corrupt_data;
    default: return Errc::io_error;  // FULL, IOERR, READONLY, CANTOPEN, NOMEM...
  }
}

// A prepared statement owned for the connection's lifetime (SQLITE_PREPARE_PERSISTENT).
class Statement {
 public:
  Statement() = default;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

  int prepare(sqlite3* db, const char* sql) {
    return sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
};

std::int64_t as_signed(std::uint64_t v) { return static_cast<std::int64_t>(v); }

}  // namespace

struct SqliteStore::Statements {
  Statement begin, commit, rollback, insert_queue, upsert_message, delete_message, update_count, read_message,
      scan_lane;
};

std::filesystem::path database_path(const std::filesystem::path& data_dir) { return data_dir / kFileName; }

SqliteStore::SqliteStore(Options options)
    : options_(std::move(options)),
      path_(database_path(options_.data_dir)),
      where_(path_.string()),
      log_(logging::get("store")) {}

SqliteStore::~SqliteStore() { close(); }

// ---- the connection ----------------------------------------------------------------------------

Status SqliteStore::connect() {
  disconnect();
  // Only the first open may create the file: reopening after a failure must find the same one
  // (an empty new database would take appends while the stored messages are gone).
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (identity_ ? 0 : SQLITE_OPEN_CREATE);
  if (auto same = check_identity(); !same) return same;
  int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    Error e(errc_of(rc), fmt::format("sqlite {}: cannot open: {}", where_, db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc)));
    disconnect();
    return unexpected(std::move(e));
  }
  sqlite3_extended_result_codes(db_, 1);
  if (auto same = check_identity(); !same) {  // reopening: still the file open() found?
    disconnect();
    return same;
  }
  auto exec = [this](const char* sql) -> Status {
    char* message = nullptr;
    const int code = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
    if (code == SQLITE_OK) return ok();
    std::string text = message ? message : sqlite3_errstr(code);
    sqlite3_free(message);
    if ((code & 0xff) == SQLITE_BUSY) text += " (another process has the database open)";
    return unexpected(errc_of(code), fmt::format("sqlite {}: {}: {}", where_, sql, text));
  };
  // Exclusive locking before WAL: the WAL index then lives in heap memory, no -shm file, and the
  // lock taken by the first write below is held until close, which keeps a second broker out
  // (the journal's LOCK file does the same). No busy timeout: a held lock fails at once.
  Status st = exec("PRAGMA locking_mode = EXCLUSIVE");
  if (st) st = exec("PRAGMA journal_mode = WAL");
  if (st) st = exec(synchronous_pragma(options_.sqlite_synchronous));
  if (st) st = exec("BEGIN IMMEDIATE");
  if (st) st = exec("COMMIT");
  if (st) st = migrate(db_, where_);
  if (!st) {
    disconnect();
    return st;
  }
  stmts_ = std::make_unique<Statements>();
  struct {
    Statement* stmt;
    const char* sql;
  } const prepared[] = {
      {&stmts_->begin, "BEGIN IMMEDIATE"},
      {&stmts_->commit, "COMMIT"},
      {&stmts_->rollback, "ROLLBACK"},
      {&stmts_->insert_queue, "INSERT INTO queues (id, key) VALUES (?1, ?2)"},
      // A message stored again under the same queue and id replaces the old row: the new
      // content, the end of the append order, delivery count 0 (what the journal's replay does;
      // the count is more than 0 only when the same group delivered it already).
      {&stmts_->upsert_message,
       "INSERT OR REPLACE INTO messages (seq, queue_id, id_hi, id_lo, priority, expires_ms, deliver_at_ms, "
       "delivery_count, message) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"},
      {&stmts_->delete_message, "DELETE FROM messages WHERE queue_id = ?1 AND id_hi = ?2 AND id_lo = ?3"},
      {&stmts_->update_count,
       "UPDATE messages SET delivery_count = ?4 WHERE queue_id = ?1 AND id_hi = ?2 AND id_lo = ?3"},
      // Read back by location: seq is the rowid, so this is one b-tree lookup.
      {&stmts_->read_message, "SELECT queue_id, id_hi, id_lo, message FROM messages WHERE seq = ?1"},
      // A scan of a cold tail: a range of messages_by_lane (queue_id, priority, seq), in order.
      {&stmts_->scan_lane,
       "SELECT seq, id_hi, id_lo, delivery_count, message FROM messages "
       "WHERE queue_id = ?1 AND priority = ?2 AND seq >= ?3 ORDER BY seq LIMIT ?4"},
  };
  for (const auto& p : prepared) {
    rc = p.stmt->prepare(db_, p.sql);
    if (rc != SQLITE_OK) {
      Error e(errc_of(rc), fmt::format("sqlite {}: cannot prepare \"{}\": {}", where_, p.sql, sqlite3_errmsg(db_)));
      disconnect();
      return unexpected(std::move(e));
    }
  }
  if (auto loaded = load_state(); !loaded) {
    disconnect();
    return loaded;
  }
  if (!identity_) {
    struct stat st_buf {};
    if (::stat(path_.c_str(), &st_buf) == 0) identity_ = FileIdentity{st_buf.st_dev, st_buf.st_ino};
  }
  return ok();
}

// SQLite keeps writing to a database file that was deleted or renamed while open, and those
// writes would be lost at the next start: a group is only written while the path still names
// the file this store opened.
Status SqliteStore::check_identity() const {
  if (!identity_) return ok();
  struct stat st_buf {};
  if (::stat(path_.c_str(), &st_buf) != 0 || st_buf.st_dev != identity_->dev || st_buf.st_ino != identity_->ino) {
    return unexpected(Errc::io_error, fmt::format("sqlite {}: the database file was removed or replaced while "
                                                  "open; put it back or restart the broker",
                                                  where_));
  }
  return ok();
}

void SqliteStore::disconnect() {
  stmts_.reset();
  if (db_ != nullptr) {
    // Every statement is finalized above, so this closes now (and checkpoints the WAL).
    sqlite3_close_v2(db_);
    db_ = nullptr;
  }
  queues_.clear();
}

// Reads what the writer must know from the committed tables: queue ids and the next sequence
// number. Counters only move forward, so a number used by a group that failed is never reused.
Status SqliteStore::load_state() {
  auto fail = [this](const char* what) {
    return unexpected(errc_of(sqlite3_errcode(db_)),
                      fmt::format("sqlite {}: cannot read {}: {}", where_, what, sqlite3_errmsg(db_)));
  };
  queues_.clear();
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT id, key FROM queues", -1, &stmt, nullptr) != SQLITE_OK) return fail("queues");
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const std::int64_t id = sqlite3_column_int64(stmt, 0);
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
    queues_.emplace(std::string(text ? text : "", static_cast<std::size_t>(sqlite3_column_bytes(stmt, 1))), id);
    next_queue_id_ = std::max<std::int64_t>(next_queue_id_, id + 1);
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) return fail("queues");
  if (sqlite3_prepare_v2(db_, "SELECT max(seq) FROM messages", -1, &stmt, nullptr) != SQLITE_OK) return fail("messages");
  rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW && sqlite3_column_type(stmt, 0) != SQLITE_NULL) {
    next_seq_ = std::max<std::int64_t>(next_seq_, sqlite3_column_int64(stmt, 0) + 1);
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) return fail("messages");
  return ok();
}

// ---- lifecycle ---------------------------------------------------------------------------------

Status SqliteStore::open() {
  if (state_ != State::created) return unexpected(Errc::invalid_argument, "sqlite store: open() called twice");
  std::error_code ec;
  std::filesystem::create_directories(options_.data_dir, ec);
  if (ec) {
    failure_ = Error(Errc::io_error, "cannot create " + options_.data_dir.string() + ": " + ec.message());
    state_ = State::failed;
    return unexpected(*failure_);
  }
  Status st = connect();
  // Queues left without messages (temporary queues, closed subscriptions) are dropped here, once
  // per start, rather than on every ack.
  if (st) {
    char* message = nullptr;
    const int rc = sqlite3_exec(
        db_, "DELETE FROM queues WHERE NOT EXISTS (SELECT 1 FROM messages WHERE messages.queue_id = queues.id)",
        nullptr, nullptr, &message);
    if (rc != SQLITE_OK) log_->warn("sqlite {}: cannot drop empty queues: {}", where_, message ? message : "");
    sqlite3_free(message);
    if (rc == SQLITE_OK) st = load_state();
  }
  if (!st) {
    failure_ = st.error();
    state_ = State::failed;
    return st;
  }
  state_ = State::opened;
  return ok();
}

Status SqliteStore::recover(const std::function<void(RecoveredMessage)>& visit) {
  if (state_ != State::opened) {
    return unexpected(Errc::invalid_argument, "sqlite store: recover() needs open() first");
  }
  const auto began = std::chrono::steady_clock::now();
  std::unordered_map<std::int64_t, const std::string*> keys;
  for (const auto& [key, id] : queues_) keys.emplace(id, &key);
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_,
                         "SELECT seq, queue_id, id_hi, id_lo, delivery_count, message FROM messages ORDER BY seq",
                         -1, &stmt, nullptr) != SQLITE_OK) {
    return unexpected(errc_of(sqlite3_errcode(db_)),
                      fmt::format("sqlite {}: cannot read messages: {}", where_, sqlite3_errmsg(db_)));
  }
  std::uint64_t live = 0, skipped = 0;
  std::vector<std::int64_t> spilled;  // dead at a restart: deleted below
  Status result = ok();
  int rc;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    const std::int64_t seq = sqlite3_column_int64(stmt, 0);
    const std::int64_t queue = sqlite3_column_int64(stmt, 1);
    const model::MessageId id{static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 2)),
                             static_cast<std::uint64_t>(sqlite3_column_int64(stmt, 3))};
    const auto count = static_cast<std::uint32_t>(sqlite3_column_int64(stmt, 4));
    const auto* bytes = static_cast<const char*>(sqlite3_column_blob(stmt, 5));
    const std::string_view blob(bytes ? bytes : "", static_cast<std::size_t>(sqlite3_column_bytes(stmt, 5)));
    std::string problem;
    auto key = keys.find(queue);
    auto decoded = decode_message(blob);
    if (key == keys.end()) {
      problem = fmt::format("queue id {} is not in the queues table", queue);
    } else if (!decoded) {
      problem = decoded.error().detail;
    } else if (decoded->id != id) {
      problem = fmt::format("the message's id {} differs from the row's {}", id_text(decoded->id), id_text(id));
    }
    if (!problem.empty()) {
      const std::string detail = fmt::format("sqlite {}: message seq {}: {}", where_, seq, problem);
      if (options_.recovery == RecoveryMode::strict) {
        result = unexpected(Errc::corrupt_data, detail + " (start with --recover skip-corrupt to skip it)");
        break;
      }
      log_->warn("{}; skipped", detail);
      ++skipped;
      continue;
    }
    if (decoded->spilled) {
      spilled.push_back(seq);
      continue;
    }
    ++live;
    visit(RecoveredMessage{*key->second, std::make_shared<const model::Message>(std::move(*decoded)), count,
                           Location{static_cast<std::uint64_t>(seq), 0, 0}});
  }
  if (result && rc != SQLITE_DONE) {
    result = unexpected(errc_of(rc), fmt::format("sqlite {}: reading messages: {}", where_, sqlite3_errmsg(db_)));
  }
  sqlite3_finalize(stmt);
  if (!result) return result;
  for (std::size_t i = 0; i < spilled.size(); i += kDeleteChunk) {
    const auto end = std::min(spilled.size(), i + kDeleteChunk);
    const std::string sql = fmt::format("DELETE FROM messages WHERE seq IN ({})",
                                        fmt::join(spilled.begin() + static_cast<std::ptrdiff_t>(i),
                                                  spilled.begin() + static_cast<std::ptrdiff_t>(end), ","));
    char* message = nullptr;
    const int deleted = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message);
    const std::string text = message ? message : "";
    sqlite3_free(message);
    if (deleted != SQLITE_OK) {
      return unexpected(errc_of(deleted), fmt::format("sqlite {}: cannot delete spilled messages: {}", where_, text));
    }
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count();
  log_->info("sqlite {}: recovered {} live messages in {} ms{}{}", where_, live, ms,
             skipped ? fmt::format(" ({} corrupt rows skipped)", skipped) : std::string(),
             spilled.empty() ? std::string()
                             : fmt::format("; {} spilled non-persistent messages dropped", spilled.size()));
  return ok();
}

void SqliteStore::start() {
  if (state_ == State::failed) {
    // Started anyway: the writer answers every append, in order, with the reason.
    log_->error("sqlite {}: not usable, every append will fail: {}", where_, failure_->to_string());
  } else if (state_ != State::opened) {
    return;
  }
  state_ = State::running;
  writer_.start();
}

void SqliteStore::append(Batch batch, DurableCallback on_durable) { writer_.append(std::move(batch), std::move(on_durable)); }

void SqliteStore::append_located(Batch batch, LocatedCallback on_durable) {
  writer_.append_located(std::move(batch), std::move(on_durable));
}

void SqliteStore::close() {
  if (state_ == State::closed) return;
  writer_.refuse_appends();
  // Appends made before start(): the writer drains them like any group, then exits.
  if ((state_ == State::opened || state_ == State::failed) && writer_.has_queued()) start();
  writer_.join();
  // Never opened: nobody ran these.
  writer_.fail_queued(failure_ ? *failure_ : Error(Errc::shutting_down, "sqlite store was never opened"));
  disconnect();
  state_ = State::closed;
}

SqliteStore::Stats SqliteStore::stats() const {
  return Stats{writer_.batches(), writer_.failed_batches(), writer_.transactions(),
               reconnects_.load(std::memory_order_relaxed)};
}

void SqliteStore::read(std::string queue, std::vector<ReadItem> items, ReadCallback done) {
  // The connection holds SQLite's exclusive lock, so no second connection can read: the writer
  // thread reads, between group commits.
  writer_.run_on_writer([this, queue = std::move(queue), items = std::move(items), done = std::move(done)](Status can) {
    std::vector<Result<model::MessagePtr>> answers;
    answers.reserve(items.size());
    if (can && db_ == nullptr) {
      if (auto st = connect(); !st) can = st;
    }
    for (const ReadItem& item : items) {
      if (!can) {
        answers.emplace_back(unexpected(can.error()));
      } else {
        answers.push_back(read_one(queue, item));
      }
    }
    if (done) done(std::move(answers));
  });
}

void SqliteStore::scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) {
  writer_.run_on_writer([this, queue = std::move(queue), priority, from, max, done = std::move(done)](Status can) {
    if (can && db_ == nullptr) {
      if (auto st = connect(); !st) can = st;
    }
    Result<ScanResult> out = can ? scan_rows(queue, priority, from, max) : Result<ScanResult>(unexpected(can.error()));
    if (done) done(std::move(out));
  });
}

// Writer thread. One more row than asked is fetched (not decoded) to tell whether the lane is
// exhausted; an exhausted scan's next is past every seq handed out so far.
Result<ScanResult> SqliteStore::scan_rows(const std::string& queue, std::uint8_t priority, Location from,
                                          std::size_t max) {
  ScanResult out;
  const std::uint64_t first = from.offset == 0 && from.record == 0 ? from.file : from.file + 1;
  const Location end{std::max(first, static_cast<std::uint64_t>(next_seq_)), 0, 0};
  auto q = queues_.find(queue);
  if (q == queues_.end() || first > static_cast<std::uint64_t>(INT64_MAX)) {
    out.next = std::max(from, end);
    out.exhausted = true;
    return out;
  }
  sqlite3_stmt* s = stmts_->scan_lane.get();
  sqlite3_bind_int64(s, 1, q->second);
  sqlite3_bind_int(s, 2, priority);
  sqlite3_bind_int64(s, 3, static_cast<std::int64_t>(first));
  sqlite3_bind_int64(s, 4, max >= static_cast<std::size_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(max) + 1);
  std::optional<Error> failure;
  bool more = false;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    if (out.messages.size() == max) {
      more = true;
      break;
    }
    const std::int64_t seq = sqlite3_column_int64(s, 0);
    const model::MessageId id{static_cast<std::uint64_t>(sqlite3_column_int64(s, 1)),
                             static_cast<std::uint64_t>(sqlite3_column_int64(s, 2))};
    const auto* bytes = static_cast<const char*>(sqlite3_column_blob(s, 4));
    auto decoded = decode_message(std::string_view(bytes ? bytes : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 4))));
    if (!decoded || decoded->id != id) {
      failure = Error(Errc::corrupt_data, fmt::format("sqlite {}: scan of {}: message seq {}: {}", where_, queue, seq,
                                                      decoded ? "the message's id differs from the row's"
                                                              : decoded.error().detail));
      break;
    }
    const Location at{static_cast<std::uint64_t>(seq), 0, 0};
    out.messages.push_back(ScannedMessage{std::make_shared<const model::Message>(std::move(*decoded)), at,
                                          static_cast<std::uint32_t>(sqlite3_column_int64(s, 3))});
    out.next = Location{at.file + 1, 0, 0};
  }
  if (!failure && rc != SQLITE_ROW && rc != SQLITE_DONE) {
    failure = Error(errc_of(rc), fmt::format("sqlite {}: scan of {}: {}", where_, queue, sqlite3_errmsg(db_)));
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (failure) return unexpected(std::move(*failure));
  out.exhausted = !more;
  if (out.exhausted) out.next = std::max({out.next, from, end});
  return out;
}

// Writer thread.
Result<model::MessagePtr> SqliteStore::read_one(const std::string& queue, const ReadItem& item) {
  auto missing = [&] {
    return unexpected(Errc::not_found, fmt::format("sqlite {}: no live message {} of {} at seq {} (acked or replaced)",
                                                   where_, id_text(item.id), queue, item.location.file));
  };
  auto q = queues_.find(queue);
  if (!item.location.valid() || item.location.offset != 0 || item.location.record != 0 || q == queues_.end() ||
      item.location.file > static_cast<std::uint64_t>(INT64_MAX)) {
    return missing();
  }
  sqlite3_stmt* s = stmts_->read_message.get();
  sqlite3_bind_int64(s, 1, static_cast<std::int64_t>(item.location.file));
  const int rc = sqlite3_step(s);
  Result<model::MessagePtr> out = missing();
  if (rc == SQLITE_ROW) {
    const model::MessageId id{static_cast<std::uint64_t>(sqlite3_column_int64(s, 1)),
                             static_cast<std::uint64_t>(sqlite3_column_int64(s, 2))};
    if (sqlite3_column_int64(s, 0) == q->second && id == item.id) {
      const auto* bytes = static_cast<const char*>(sqlite3_column_blob(s, 3));
      auto decoded = decode_message(std::string_view(bytes ? bytes : "", static_cast<std::size_t>(sqlite3_column_bytes(s, 3))));
      if (decoded && decoded->id == item.id) {
        out = model::MessagePtr(std::make_shared<const model::Message>(std::move(*decoded)));
      } else {
        out = unexpected(Errc::corrupt_data, fmt::format("sqlite {}: message seq {}: {}", where_, item.location.file,
                                                         decoded ? "the message's id differs from the row's"
                                                                 : decoded.error().detail));
      }
    }
  } else if (rc != SQLITE_DONE) {
    out = unexpected(errc_of(rc), fmt::format("sqlite {}: reading message seq {}: {}", where_, item.location.file,
                                              sqlite3_errmsg(db_)));
  }
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  return out;
}

// ---- the writer --------------------------------------------------------------------------------

Status SqliteStore::write_group(std::vector<Pending>& group) {
  if (db_ == nullptr) {  // open() failed, or the last group broke the connection: try again now
    if (auto st = connect(); !st) return st;
    reconnects_.fetch_add(1, std::memory_order_relaxed);
    log_->info("sqlite {}: reopened", where_);
  }
  std::vector<const EncodedBatch*> valid;
  std::vector<Pending*> valid_pending;
  valid.reserve(group.size());
  for (Pending& p : group) {
    if (p.encoded.valid) {
      valid.push_back(&p.encoded);
      valid_pending.push_back(&p);
    }
  }
  const GroupChanges changes = GroupChanges::fold(valid);
  const std::int64_t first_seq = next_seq_;  // write_upsert numbers the upserts in order from here
  Status st = check_identity();
  if (st) st = execute(stmts_->begin.get(), "BEGIN");
  for (std::size_t i = 0; st && i < changes.upserts.size(); ++i) st = write_upsert(changes.upserts[i]);
  for (std::size_t i = 0; st && i < changes.removals.size(); ++i) {
    st = write_key(stmts_->delete_message.get(), changes.removals[i], std::nullopt, "ack");
  }
  for (std::size_t i = 0; st && i < changes.counts.size(); ++i) {
    st = write_key(stmts_->update_count.get(), changes.counts[i].first, changes.counts[i].second, "delivery count");
  }
  if (st) st = execute(stmts_->commit.get(), "COMMIT");
  if (st) {
    for (std::size_t i = 0; i < changes.upserts.size(); ++i) {
      Pending& p = *valid_pending[changes.upserts[i].batch];
      if (p.located) p.locations[changes.upserts[i].record] = Location{static_cast<std::uint64_t>(first_seq) + i, 0, 0};
    }
    return ok();
  }
  // Roll back (SQLite may already have) and start over on a fresh connection next time: after an
  // I/O error the connection's page cache cannot be trusted, and reconnecting re-reads the
  // committed queue ids, forgetting the ones this group invented.
  if (!sqlite3_get_autocommit(db_)) (void)execute(stmts_->rollback.get(), "ROLLBACK");
  disconnect();
  return st;
}

// Steps a statement that returns no rows, then resets it for the next use.
Status SqliteStore::execute(sqlite3_stmt* s, std::string_view what) {
  const int rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (rc == SQLITE_DONE) return ok();
  return unexpected(errc_of(rc), fmt::format("sqlite {}: {}: {}", where_, what, sqlite3_errmsg(db_)));
}

Result<std::int64_t> SqliteStore::queue_id(const std::string& key, bool create) {
  if (auto it = queues_.find(key); it != queues_.end()) return it->second;
  if (!create) return std::int64_t{0};
  const std::int64_t id = next_queue_id_++;
  sqlite3_stmt* s = stmts_->insert_queue.get();
  sqlite3_bind_int64(s, 1, id);
  sqlite3_bind_text(s, 2, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
  if (auto st = execute(s, "adding queue " + key); !st) return unexpected(st.error());
  queues_.emplace(key, id);
  return id;
}

Status SqliteStore::write_upsert(const GroupChanges::Upsert& u) {
  auto queue = queue_id(*u.key.queue, true);
  if (!queue) return unexpected(std::move(queue).error());
  sqlite3_stmt* s = stmts_->upsert_message.get();
  sqlite3_bind_int64(s, 1, next_seq_++);
  sqlite3_bind_int64(s, 2, *queue);
  sqlite3_bind_int64(s, 3, as_signed(u.key.id.hi));
  sqlite3_bind_int64(s, 4, as_signed(u.key.id.lo));
  sqlite3_bind_int64(s, 5, u.message->priority);
  sqlite3_bind_int64(s, 6, u.message->expires_ms);
  sqlite3_bind_int64(s, 7, u.message->deliver_at_ms);
  sqlite3_bind_int64(s, 8, u.delivery_count);
  sqlite3_bind_blob64(s, 9, u.blob->data(), u.blob->size(), SQLITE_STATIC);
  return execute(s, fmt::format("writing message {} in {}", id_text(u.key.id), *u.key.queue));
}

// An ack (delete) or a delivery count (update) of a row that may exist.
Status SqliteStore::write_key(sqlite3_stmt* s, const GroupChanges::Key& key, std::optional<std::uint32_t> count,
                              std::string_view what) {
  // A queue that holds nothing has nothing to change.
  auto queue = queue_id(*key.queue, false);
  if (!queue) return unexpected(std::move(queue).error());
  if (*queue == 0) return ok();
  sqlite3_bind_int64(s, 1, *queue);
  sqlite3_bind_int64(s, 2, as_signed(key.id.hi));
  sqlite3_bind_int64(s, 3, as_signed(key.id.lo));
  if (count) sqlite3_bind_int64(s, 4, *count);
  return execute(s, fmt::format("writing {} of {} in {}", what, id_text(key.id), *key.queue));
}

}  // namespace carrier::store::sqlite
