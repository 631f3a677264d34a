#include "store/postgres/postgres_store.hpp"

#include <libpq-fe.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "base/logging.hpp"
#include "store/message_codec.hpp"
#include "store/postgres/libpq_loader.hpp"

namespace carrier::store::postgres {

namespace {

// Type OIDs (pg_type.h).
constexpr unsigned kInt8 = 20, kInt2 = 21, kInt4 = 23, kBytea = 17;
constexpr unsigned kInt8Array = 1016, kInt4Array = 1007, kInt2Array = 1005, kByteaArray = 1001;

// One statement carries at most this many rows or message bytes; a bigger group is several
// statements (still one transaction). A protocol message must stay under 1 GB.
constexpr std::size_t kMaxRowsPerStatement = 10000;
constexpr std::size_t kMaxBytesPerStatement = 64u << 20;

// First half of the advisory lock key: "carr". The second half is hashtext(schema).
constexpr std::int32_t kLockClass = 0x63617272;

// How long open() waits for the advisory lock: a broker killed a moment ago leaves its session
// behind until the server notices the closed socket.
constexpr auto kLockWait = std::chrono::seconds(5);

// How many rows recovery fetches at a time from its cursor.
constexpr int kFetchRows = 1000;
// Spilled messages deleted at recovery per statement.
constexpr std::size_t kSpilledDeleteChunk = 10'000;

constexpr const char* kAddQueues = "carrier_add_queues";
constexpr const char* kUpsertMessages = "carrier_upsert_messages";
constexpr const char* kDeleteMessages = "carrier_delete_messages";
constexpr const char* kUpdateCounts = "carrier_update_counts";

std::int64_t as_signed(std::uint64_t v) { return static_cast<std::int64_t>(v); }

std::string ms_text(std::chrono::milliseconds ms) { return fmt::format("{} ms", ms.count()); }

}  // namespace

PostgresStore::PostgresStore(Options options)
    : options_(std::move(options)), schema_(options_.postgres_schema), log_(logging::get("store")) {}

PostgresStore::~PostgresStore() { close(); }

// ---- the connection ----------------------------------------------------------------------------

Status PostgresStore::connect() {
  conn_.reset();
  lock_refused_ = false;
  auto made = PgConnection::connect(options_.postgres_url);
  if (!made) return unexpected(std::move(made).error());
  PgConnection c = std::move(*made);
  {
    Params p;
    Int4Param lock_class(kLockClass);
    p.add(lock_class);
    p.add(schema_.data(), schema_.size());
    auto locked = c.exec("SELECT pg_try_advisory_lock($1::int4, hashtext($2::text))", p);
    if (!locked) return unexpected(std::move(locked).error());
    if (std::string_view(PQgetvalue(locked->get(), 0, 0)) != "t") {
      lock_refused_ = true;
      return unexpected(Errc::unavailable,
                        fmt::format("postgres: schema {} is in use by another Carrier broker (its advisory lock is held)",
                                    schema_));
    }
  }
  if (auto st = migrate(c, schema_); !st) return st;
  const std::string s = schema_;
  const struct {
    const char* name;
    std::string sql;
    std::vector<unsigned> types;
  } statements[] = {
      // Set-based: each statement takes a group's rows as arrays (GroupChanges has one change
      // per key, so no row is touched twice by one statement).
      {kAddQueues, "INSERT INTO " + s + ".queues (id, key) SELECT * FROM unnest($1::int8[], $2::bytea[])",
       {kInt8Array, kByteaArray}},
      // The same queue and id again replaces the row: new content, the end of the append order,
      // the count the group gave it (0 unless the same group delivered it already).
      {kUpsertMessages,
       "INSERT INTO " + s +
           ".messages (seq, queue_id, id_hi, id_lo, priority, expires_ms, deliver_at_ms, delivery_count, message) "
           "SELECT * FROM unnest($1::int8[], $2::int8[], $3::int8[], $4::int8[], $5::int2[], $6::int8[], $7::int8[], "
           "$8::int4[], $9::bytea[]) ON CONFLICT (queue_id, id_hi, id_lo) DO UPDATE SET seq = EXCLUDED.seq, "
           "priority = EXCLUDED.priority, expires_ms = EXCLUDED.expires_ms, deliver_at_ms = EXCLUDED.deliver_at_ms, "
           "delivery_count = EXCLUDED.delivery_count, message = EXCLUDED.message",
       {kInt8Array, kInt8Array, kInt8Array, kInt8Array, kInt2Array, kInt8Array, kInt8Array, kInt4Array, kByteaArray}},
      {kDeleteMessages,
       "DELETE FROM " + s + ".messages m USING unnest($1::int8[], $2::int8[], $3::int8[]) AS d(queue_id, id_hi, id_lo) "
           "WHERE m.queue_id = d.queue_id AND m.id_hi = d.id_hi AND m.id_lo = d.id_lo",
       {kInt8Array, kInt8Array, kInt8Array}},
      {kUpdateCounts,
       "UPDATE " + s + ".messages m SET delivery_count = d.count FROM unnest($1::int8[], $2::int8[], $3::int8[], "
           "$4::int4[]) AS d(queue_id, id_hi, id_lo, count) "
           "WHERE m.queue_id = d.queue_id AND m.id_hi = d.id_hi AND m.id_lo = d.id_lo",
       {kInt8Array, kInt8Array, kInt8Array, kInt4Array}},
  };
  for (const auto& st : statements) {
    if (auto prepared = c.prepare(st.name, st.sql, st.types); !prepared) return prepared;
  }
  conn_ = std::move(c);
  if (auto loaded = load_state(); !loaded) {
    conn_.reset();
    return loaded;
  }
  return ok();
}

// What the writer must know from the committed tables. Counters only move forward, so a number
// used by a group that failed (or whose commit answer was lost) is never used again.
Status PostgresStore::load_state() {
  queues_.clear();
  auto rows = conn_.exec("SELECT id, key FROM " + schema_ + ".queues", {}, true);
  if (!rows) return unexpected(std::move(rows).error());
  PGresult* r = rows->get();
  for (int i = 0; i < PQntuples(r); ++i) {
    const std::int64_t id = read_int8(PQgetvalue(r, i, 0));
    queues_.emplace(std::string(PQgetvalue(r, i, 1), static_cast<std::size_t>(PQgetlength(r, i, 1))), id);
    next_queue_id_ = std::max(next_queue_id_, id + 1);
  }
  auto max_seq = conn_.exec("SELECT coalesce(max(seq), 0) FROM " + schema_ + ".messages", {}, true);
  if (!max_seq) return unexpected(std::move(max_seq).error());
  next_seq_ = std::max(next_seq_, read_int8(PQgetvalue(max_seq->get(), 0, 0)) + 1);
  return ok();
}

// ---- lifecycle ---------------------------------------------------------------------------------

Status PostgresStore::open() {
  if (state_ != State::created) return unexpected(Errc::invalid_argument, "postgres store: open() called twice");
  if (auto valid = check_schema_name(schema_); !valid) {
    failure_ = valid.error();
    state_ = State::failed;
    return valid;
  }
  if (auto loaded = load_libpq(); !loaded) {
    failure_ = loaded.error();
    state_ = State::failed;
    return loaded;
  }
  const auto deadline = std::chrono::steady_clock::now() + kLockWait;
  Status st = connect();
  while (!st && lock_refused_ && std::chrono::steady_clock::now() < deadline) {
    // Waiting for a session that is going away; bounded, and only for the lock.
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    st = connect();
  }
  if (st) {
    // Queues left without messages are dropped once per start rather than on every ack.
    auto dropped = conn_.exec("DELETE FROM " + schema_ + ".queues q WHERE NOT EXISTS (SELECT 1 FROM " + schema_ +
                              ".messages m WHERE m.queue_id = q.id)");
    if (!dropped) log_->warn("{}; continuing", dropped.error().detail);
    st = load_state();
  }
  if (!st) {
    conn_.reset();
    failure_ = st.error();
    state_ = State::failed;
    return st;
  }
  log_->info("postgres: connected, schema {} (version {})", schema_, kSchemaVersion);
  state_ = State::opened;
  return ok();
}

Status PostgresStore::recover(const std::function<void(RecoveredMessage)>& visit) {
  if (state_ != State::opened) return unexpected(Errc::invalid_argument, "postgres store: recover() needs open() first");
  const auto began = std::chrono::steady_clock::now();
  std::unordered_map<std::int64_t, const std::string*> keys;
  for (const auto& [key, id] : queues_) keys.emplace(id, &key);

  // A cursor keeps the client's memory to one fetch, whatever the table holds.
  if (auto begun = conn_.exec("BEGIN READ ONLY"); !begun) return unexpected(std::move(begun).error());
  auto declared = conn_.exec("DECLARE carrier_recovery NO SCROLL CURSOR FOR SELECT seq, queue_id, id_hi, id_lo, "
                             "delivery_count, message FROM " + schema_ + ".messages ORDER BY seq");
  Status result = declared ? ok() : Status(unexpected(std::move(declared).error()));
  std::uint64_t live = 0, skipped = 0;
  std::vector<std::int64_t> spilled;  // dead at a restart: deleted below
  const std::string fetch = fmt::format("FETCH FORWARD {} FROM carrier_recovery", kFetchRows);
  while (result) {
    auto rows = conn_.exec(fetch, {}, true);
    if (!rows) {
      result = unexpected(std::move(rows).error());
      break;
    }
    PGresult* r = rows->get();
    const int n = PQntuples(r);
    if (n == 0) break;
    for (int i = 0; i < n && result; ++i) {
      const std::int64_t seq = read_int8(PQgetvalue(r, i, 0));
      const std::int64_t queue = read_int8(PQgetvalue(r, i, 1));
      const model::MessageId id{static_cast<std::uint64_t>(read_int8(PQgetvalue(r, i, 2))),
                               static_cast<std::uint64_t>(read_int8(PQgetvalue(r, i, 3)))};
      const auto count = static_cast<std::uint32_t>(read_int4(PQgetvalue(r, i, 4)));
      const std::string_view blob(PQgetvalue(r, i, 5), static_cast<std::size_t>(PQgetlength(r, i, 5)));
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
        const std::string detail = fmt::format("postgres: schema {}: message seq {}: {}", schema_, seq, problem);
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
  }
  if (auto ended = conn_.exec("COMMIT"); !ended && result) result = unexpected(std::move(ended).error());
  if (!result) return result;
  for (std::size_t i = 0; i < spilled.size(); i += kSpilledDeleteChunk) {
    const auto end = std::min(spilled.size(), i + kSpilledDeleteChunk);
    auto deleted = conn_.exec(fmt::format("DELETE FROM {}.messages WHERE seq IN ({})", schema_,
                                          fmt::join(spilled.begin() + static_cast<std::ptrdiff_t>(i),
                                                    spilled.begin() + static_cast<std::ptrdiff_t>(end), ",")));
    if (!deleted) return unexpected(std::move(deleted).error());
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - began).count();
  log_->info("postgres: schema {}: recovered {} live messages in {} ms{}{}", schema_, live, ms,
             skipped ? fmt::format(" ({} corrupt rows skipped)", skipped) : std::string(),
             spilled.empty() ? std::string()
                             : fmt::format("; {} spilled non-persistent messages dropped", spilled.size()));
  return ok();
}

// Reads share the writer's connection (and its reconnect logic): they run on the writer thread
// between group commits, all items of a read in one statement.
void PostgresStore::read(std::string queue, std::vector<ReadItem> items, ReadCallback done) {
  writer_.run_on_writer([this, queue = std::move(queue), items = std::move(items), done = std::move(done)](Status can) {
    std::vector<Result<model::MessagePtr>> answers;
    if (can) {
      answers = read_rows(queue, items);
    } else {
      for (std::size_t i = 0; i < items.size(); ++i) answers.emplace_back(unexpected(can.error()));
    }
    if (done) done(std::move(answers));
  });
}

// Writer thread.
std::vector<Result<model::MessagePtr>> PostgresStore::read_rows(const std::string& queue,
                                                                const std::vector<ReadItem>& items) {
  std::vector<Result<model::MessagePtr>> answers;
  answers.reserve(items.size());
  for (const ReadItem& item : items) {
    answers.emplace_back(unexpected(Errc::not_found,
                                    fmt::format("postgres: schema {}: no live message {} of {} at seq {} (acked or "
                                                "replaced)",
                                                schema_, id_text(item.id), queue, item.location.file)));
  }
  auto q = queues_.find(queue);
  ArrayParam seqs(kInt8);
  std::unordered_map<std::int64_t, std::vector<std::size_t>> wanted;  // seq -> items asking for it
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Location& at = items[i].location;
    if (q == queues_.end() || !at.valid() || at.offset != 0 || at.record != 0 ||
        at.file > static_cast<std::uint64_t>(INT64_MAX)) {
      continue;
    }
    auto& askers = wanted[static_cast<std::int64_t>(at.file)];
    if (askers.empty()) seqs.add_int8(static_cast<std::int64_t>(at.file));
    askers.push_back(i);
  }
  if (wanted.empty()) return answers;
  if (conn_.broken()) {
    if (auto st = reconnect(); !st) {
      for (auto& a : answers) a = unexpected(st.error());
      return answers;
    }
    q = queues_.find(queue);
    if (q == queues_.end()) return answers;
  }
  Params p;
  p.add(seqs);
  auto rows = conn_.exec("SELECT seq, queue_id, id_hi, id_lo, message FROM " + schema_ +
                             ".messages WHERE seq = ANY($1::int8[])",
                         p, true);
  if (!rows) {
    Error e = std::move(rows).error();
    if (conn_.broken()) {
      conn_.reset();
      e = Error(Errc::unavailable, e.detail);
    }
    for (auto& [seq, askers] : wanted) {
      for (std::size_t i : askers) answers[i] = unexpected(e);
    }
    return answers;
  }
  PGresult* r = rows->get();
  for (int row = 0; row < PQntuples(r); ++row) {
    const std::int64_t seq = read_int8(PQgetvalue(r, row, 0));
    auto askers = wanted.find(seq);
    if (askers == wanted.end() || read_int8(PQgetvalue(r, row, 1)) != q->second) continue;
    const model::MessageId id{static_cast<std::uint64_t>(read_int8(PQgetvalue(r, row, 2))),
                             static_cast<std::uint64_t>(read_int8(PQgetvalue(r, row, 3)))};
    const std::string_view blob(PQgetvalue(r, row, 4), static_cast<std::size_t>(PQgetlength(r, row, 4)));
    auto decoded = decode_message(blob);
    Result<model::MessagePtr> message =
        decoded && decoded->id == id
            ? Result<model::MessagePtr>(model::MessagePtr(std::make_shared<const model::Message>(std::move(*decoded))))
            : Result<model::MessagePtr>(unexpected(
                  Errc::corrupt_data, fmt::format("postgres: schema {}: message seq {}: {}", schema_, seq,
                                                  decoded ? "the message's id differs from the row's"
                                                          : decoded.error().detail)));
    for (std::size_t i : askers->second) {
      if (items[i].id == id || !message) answers[i] = message;
    }
  }
  return answers;
}

// Like read(): on the writer thread after the group it arrives with, so an ack appended before
// the scan is committed first.
void PostgresStore::scan(std::string queue, std::uint8_t priority, Location from, std::size_t max, ScanCallback done) {
  writer_.run_on_writer([this, queue = std::move(queue), priority, from, max, done = std::move(done)](Status can) {
    Result<ScanResult> out = can ? scan_rows(queue, priority, from, max) : Result<ScanResult>(unexpected(can.error()));
    if (done) done(std::move(out));
  });
}

// Writer thread. One range of messages_by_lane (queue_id, priority, seq); one more row than
// asked tells whether the lane is exhausted (its message is not decoded). An exhausted scan's
// next is past every seq handed out so far.
Result<ScanResult> PostgresStore::scan_rows(const std::string& queue, std::uint8_t priority, Location from,
                                            std::size_t max) {
  ScanResult out;
  const std::uint64_t first = from.offset == 0 && from.record == 0 ? from.file : from.file + 1;
  if (conn_.broken()) {
    if (auto st = reconnect(); !st) return unexpected(st.error());
  }
  const Location end{std::max(first, static_cast<std::uint64_t>(next_seq_)), 0, 0};
  auto q = queues_.find(queue);
  if (q == queues_.end() || first > static_cast<std::uint64_t>(INT64_MAX)) {
    out.next = std::max(from, end);
    out.exhausted = true;
    return out;
  }
  Int8Param queue_id(q->second);
  Int2Param lane(static_cast<std::int16_t>(priority));
  Int8Param first_seq(static_cast<std::int64_t>(first));
  Int8Param limit(max >= static_cast<std::size_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(max) + 1);
  Params p;
  p.add(queue_id);
  p.add(lane);
  p.add(first_seq);
  p.add(limit);
  auto rows = conn_.exec("SELECT seq, id_hi, id_lo, delivery_count, message FROM " + schema_ +
                             ".messages WHERE queue_id = $1::int8 AND priority = $2::int2 AND seq >= $3::int8 "
                             "ORDER BY seq LIMIT $4::int8",
                         p, true);
  if (!rows) {
    Error e = std::move(rows).error();
    if (conn_.broken()) {
      conn_.reset();
      e = Error(Errc::unavailable, e.detail);
    }
    return unexpected(std::move(e));
  }
  PGresult* r = rows->get();
  const int n = PQntuples(r);
  for (int row = 0; row < n && out.messages.size() < max; ++row) {
    const std::int64_t seq = read_int8(PQgetvalue(r, row, 0));
    const model::MessageId id{static_cast<std::uint64_t>(read_int8(PQgetvalue(r, row, 1))),
                             static_cast<std::uint64_t>(read_int8(PQgetvalue(r, row, 2)))};
    const std::string_view blob(PQgetvalue(r, row, 4), static_cast<std::size_t>(PQgetlength(r, row, 4)));
    auto decoded = decode_message(blob);
    if (!decoded || decoded->id != id) {
      return unexpected(Errc::corrupt_data, fmt::format("postgres: schema {}: scan of {}: message seq {}: {}", schema_,
                                                        queue, seq,
                                                        decoded ? "the message's id differs from the row's"
                                                                : decoded.error().detail));
    }
    const Location at{static_cast<std::uint64_t>(seq), 0, 0};
    out.messages.push_back(ScannedMessage{std::make_shared<const model::Message>(std::move(*decoded)), at,
                                          static_cast<std::uint32_t>(read_int4(PQgetvalue(r, row, 3)))});
    out.next = Location{at.file + 1, 0, 0};
  }
  out.exhausted = static_cast<std::size_t>(n) <= max;
  if (out.exhausted) out.next = std::max({out.next, from, end});
  return out;
}

void PostgresStore::start() {
  if (state_ == State::failed) {
    log_->error("postgres: not usable until a reconnect succeeds: {}", failure_->to_string());
  } else if (state_ != State::opened) {
    return;
  }
  state_ = State::running;
  writer_.start();
}

void PostgresStore::append(Batch batch, DurableCallback on_durable) { writer_.append(std::move(batch), std::move(on_durable)); }

void PostgresStore::append_located(Batch batch, LocatedCallback on_durable) {
  writer_.append_located(std::move(batch), std::move(on_durable));
}

void PostgresStore::close() {
  if (state_ == State::closed) return;
  writer_.refuse_appends();
  if ((state_ == State::opened || state_ == State::failed) && writer_.has_queued()) start();
  writer_.join();
  writer_.fail_queued(failure_ ? *failure_ : Error(Errc::shutting_down, "postgres store was never opened"));
  conn_.reset();  // ends the session, which releases the advisory lock
  state_ = State::closed;
}

PostgresStore::Stats PostgresStore::stats() const {
  return Stats{writer_.batches(), writer_.failed_batches(), writer_.transactions(),
               reconnects_.load(std::memory_order_relaxed)};
}

// ---- the writer --------------------------------------------------------------------------------

// A new connection, or the reason there is none; failures push the next attempt back.
Status PostgresStore::reconnect() {
  const auto now = std::chrono::steady_clock::now();
  if (backoff_.count() > 0 && now < next_attempt_) {
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_attempt_ - now);
    return unexpected(Errc::unavailable, fmt::format("{} (next reconnect attempt in {})",
                                                     last_connect_error_ ? last_connect_error_->detail : "postgres: not connected",
                                                     ms_text(wait)));
  }
  Status st = connect();
  if (!st) {
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(backoff_ * 2, kMaxBackoff);
    next_attempt_ = std::chrono::steady_clock::now() + backoff_;
    if (!last_connect_error_ || last_connect_error_->detail != st.error().detail) {
      log_->error("{}; retrying with back-off up to {}", st.error().detail, ms_text(kMaxBackoff));
    }
    last_connect_error_ = st.error();
    return unexpected(Error(Errc::unavailable, st.error().detail));
  }
  if (last_connect_error_) log_->info("postgres: reconnected (schema {})", schema_);
  backoff_ = std::chrono::milliseconds(0);
  last_connect_error_.reset();
  reconnects_.fetch_add(1, std::memory_order_relaxed);
  return ok();
}

Status PostgresStore::write_group(std::vector<Pending>& group) {
  bool fresh = false;
  if (conn_.broken()) {
    if (auto st = reconnect(); !st) return st;
    fresh = true;
  }
  Status st = attempt(group);
  if (st) return ok();
  log_->warn("postgres: group commit of {} batches failed: {}", group.size(), st.error().detail);
  if (!conn_.broken()) return st;  // a statement failed: rolled back, the connection stays
  conn_.reset();
  if (fresh) {
    // It broke right after connecting: the server is going away. Back off before the next try.
    backoff_ = kFirstBackoff;
    next_attempt_ = std::chrono::steady_clock::now() + backoff_;
    last_connect_error_ = st.error();
    return unexpected(Error(Errc::unavailable, st.error().detail));
  }
  // A connection idle since the last group may have died with a server restart in between:
  // try once more on a new one (replaying the group is harmless, see the class comment).
  if (auto again = reconnect(); !again) return unexpected(Error(Errc::unavailable, st.error().detail));
  st = attempt(group);
  if (st) return ok();
  if (conn_.broken()) {
    conn_.reset();
    return unexpected(Error(Errc::unavailable, st.error().detail));
  }
  return st;
}

// The id of a queue key; a new key gets the next id, its row going into `added` (sent with the
// group), and forgotten again by load_state() if the group fails. 0 when !create and unknown.
std::int64_t PostgresStore::queue_id(const std::string& key, bool create, ArrayParam& added_ids,
                                     ArrayParam& added_keys) {
  if (auto it = queues_.find(key); it != queues_.end()) return it->second;
  if (!create) return 0;
  const std::int64_t id = next_queue_id_++;
  added_ids.add_int8(id);
  added_keys.add_bytes(key);
  queues_.emplace(key, id);
  return id;
}

Status PostgresStore::attempt(std::vector<Pending>& group) {
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
  const std::int64_t first_seq = next_seq_;  // the upserts are numbered in order from here

  Pipeline pipeline(conn_);
  pipeline.send_query("BEGIN");
  Params p;
  // New queues first: the messages' rows name them.
  ArrayParam queue_ids(kInt8), queue_keys(kBytea);
  std::vector<std::int64_t> upsert_queue(changes.upserts.size());
  for (std::size_t i = 0; i < changes.upserts.size(); ++i) {
    upsert_queue[i] = queue_id(*changes.upserts[i].key.queue, true, queue_ids, queue_keys);
  }
  if (queue_ids.count() > 0) {
    p.clear();
    p.add(queue_ids);
    p.add(queue_keys);
    pipeline.send_prepared(kAddQueues, p);
  }

  ArrayParam seq(kInt8), queue(kInt8), hi(kInt8), lo(kInt8), priority(kInt2), expires(kInt8), deliver_at(kInt8),
      count(kInt4), message(kBytea);
  auto flush_upserts = [&] {
    if (seq.count() == 0) return;
    p.clear();
    for (ArrayParam* a : {&seq, &queue, &hi, &lo, &priority, &expires, &deliver_at, &count, &message}) {
      p.add(*a);
    }
    pipeline.send_prepared(kUpsertMessages, p);  // libpq has copied the arrays: reuse them
    for (ArrayParam* a : {&seq, &queue, &hi, &lo, &priority, &expires, &deliver_at, &count, &message}) a->clear();
  };
  for (std::size_t i = 0; i < changes.upserts.size(); ++i) {
    const GroupChanges::Upsert& u = changes.upserts[i];
    seq.add_int8(next_seq_++);
    queue.add_int8(upsert_queue[i]);
    hi.add_int8(as_signed(u.key.id.hi));
    lo.add_int8(as_signed(u.key.id.lo));
    priority.add_int2(u.message->priority);
    expires.add_int8(u.message->expires_ms);
    deliver_at.add_int8(u.message->deliver_at_ms);
    count.add_int4(static_cast<std::int32_t>(u.delivery_count));
    message.add_bytes(*u.blob);
    if (seq.count() >= kMaxRowsPerStatement || message.bytes() >= kMaxBytesPerStatement) flush_upserts();
  }
  flush_upserts();

  // Acks and delivery counts: a queue that holds nothing has nothing to change.
  ArrayParam unused_ids(kInt8), unused_keys(kBytea);
  auto flush_keys = [&](const char* statement, bool with_count) {
    if (queue.count() == 0) return;
    p.clear();
    p.add(queue);
    p.add(hi);
    p.add(lo);
    if (with_count) p.add(count);
    pipeline.send_prepared(statement, p);
    for (ArrayParam* a : {&queue, &hi, &lo, &count}) a->clear();
  };
  for (const GroupChanges::Key& k : changes.removals) {
    const std::int64_t id = queue_id(*k.queue, false, unused_ids, unused_keys);
    if (id == 0) continue;
    queue.add_int8(id);
    hi.add_int8(as_signed(k.id.hi));
    lo.add_int8(as_signed(k.id.lo));
    if (queue.count() >= kMaxRowsPerStatement) flush_keys(kDeleteMessages, false);
  }
  flush_keys(kDeleteMessages, false);
  for (const auto& [k, delivery_count] : changes.counts) {
    const std::int64_t id = queue_id(*k.queue, false, unused_ids, unused_keys);
    if (id == 0) continue;
    queue.add_int8(id);
    hi.add_int8(as_signed(k.id.hi));
    lo.add_int8(as_signed(k.id.lo));
    count.add_int4(static_cast<std::int32_t>(delivery_count));
    if (queue.count() >= kMaxRowsPerStatement) flush_keys(kUpdateCounts, true);
  }
  flush_keys(kUpdateCounts, true);

  pipeline.send_query("COMMIT");
  Status st = pipeline.finish(kIdleTimeout);
  if (st) {
    for (std::size_t i = 0; i < changes.upserts.size(); ++i) {
      Pending& pending = *valid_pending[changes.upserts[i].batch];
      if (pending.located) {
        pending.locations[changes.upserts[i].record] = Location{static_cast<std::uint64_t>(first_seq) + i, 0, 0};
      }
    }
    return ok();
  }
  if (!conn_.broken()) {
    // A statement failed (disk full on the server, say): the transaction is aborted and still
    // open. Roll it back and re-read what is committed, forgetting queue ids this group made.
    if (PQtransactionStatus(conn_.get()) != PQTRANS_IDLE) (void)conn_.exec("ROLLBACK");
    if (auto reloaded = load_state(); !reloaded) conn_.reset();
  }
  return st;
}

}  // namespace carrier::store::postgres
