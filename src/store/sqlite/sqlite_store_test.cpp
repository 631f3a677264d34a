// What only the SQLite store has: its schema and versions, its lock, rows that do not decode.
// Everything the Store contract says is in store_conformance_test.cpp and
// store_read_conformance_test.cpp.

#include "store/sqlite/sqlite_store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <condition_variable>
#include <mutex>
#include <optional>

#include "store/message_codec.hpp"
#include "store/sqlite/sqlite_schema.hpp"
#include "store/test_support.hpp"

namespace carrier::store::sqlite {
namespace {

using testing::make_message;
using testing::Outcomes;
using testing::TempDir;

// Version 1's tables exactly as that build created them. Never edit: a database made by a
// version-1 build must keep opening, and this is the test that says so.
constexpr const char* kGoldenVersion1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (1);
CREATE TABLE queues (
  id  INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE
);
CREATE TABLE messages (
  seq            INTEGER PRIMARY KEY,
  queue_id       INTEGER NOT NULL,
  id_hi          INTEGER NOT NULL,
  id_lo          INTEGER NOT NULL,
  priority       INTEGER NOT NULL,
  expires_ms     INTEGER NOT NULL,
  deliver_at_ms  INTEGER NOT NULL,
  delivery_count INTEGER NOT NULL DEFAULT 0,
  message        BLOB NOT NULL
);
CREATE UNIQUE INDEX messages_by_queue ON messages (queue_id, id_hi, id_lo);
)sql";

// A raw connection to the store's file, for setting up and inspecting databases.
class RawDatabase {
 public:
  explicit RawDatabase(const std::filesystem::path& path) {
    std::filesystem::create_directories(path.parent_path());
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
  }
  ~RawDatabase() { sqlite3_close(db_); }
  void exec(const std::string& sql) {
    char* message = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK) << (message ? message : "") << "\n"
                                                                                      << sql;
    sqlite3_free(message);
  }
  // The detail column of EXPLAIN QUERY PLAN, one line per step.
  std::string plan(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, ("EXPLAIN QUERY PLAN " + sql).c_str(), -1, &s, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db_);
    std::string out;
    while (sqlite3_step(s) == SQLITE_ROW) out += std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 3))) + "\n";
    sqlite3_finalize(s);
    return out;
  }
  std::int64_t number(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, sql.c_str(), -1, &s, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
    std::int64_t v = -1;
    if (sqlite3_step(s) == SQLITE_ROW) v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return v;
  }
  void insert_message(std::int64_t seq, std::int64_t queue, const model::Message& m, const std::string& blob,
                      int delivery_count = 0) {
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_,
                                 "INSERT INTO messages (seq, queue_id, id_hi, id_lo, priority, expires_ms, "
                                 "deliver_at_ms, delivery_count, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                 -1, &s, nullptr),
              SQLITE_OK);
    sqlite3_bind_int64(s, 1, seq);
    sqlite3_bind_int64(s, 2, queue);
    sqlite3_bind_int64(s, 3, static_cast<std::int64_t>(m.id.hi));
    sqlite3_bind_int64(s, 4, static_cast<std::int64_t>(m.id.lo));
    sqlite3_bind_int64(s, 5, m.priority);
    sqlite3_bind_int64(s, 6, m.expires_ms);
    sqlite3_bind_int64(s, 7, m.deliver_at_ms);
    sqlite3_bind_int64(s, 8, delivery_count);
    sqlite3_bind_blob(s, 9, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(s), SQLITE_DONE) << sqlite3_errmsg(db_);
    sqlite3_finalize(s);
  }

 private:
  sqlite3* db_ = nullptr;
};

Options sqlite_options(const TempDir& dir, RecoveryMode mode = RecoveryMode::strict) {
  Options o;
  o.kind = "sqlite";
  o.data_dir = dir.path();
  o.recovery = mode;
  return o;
}

Result<std::vector<RecoveredMessage>> open_and_recover(SqliteStore& store) {
  if (auto st = store.open(); !st) return unexpected(st.error());
  std::vector<RecoveredMessage> out;
  if (auto st = store.recover([&](RecoveredMessage m) { out.push_back(std::move(m)); }); !st) {
    return unexpected(st.error());
  }
  return out;
}

TEST(SqliteStore, NewDatabaseGetsTheCurrentSchema) {
  TempDir dir;
  {
    SqliteStore store(sqlite_options(dir));
    ASSERT_TRUE(store.open());
    store.close();
  }
  RawDatabase db(database_path(dir.path()));
  EXPECT_EQ(db.number("SELECT version FROM schema_version"), kSchemaVersion);
  EXPECT_EQ(db.number("SELECT count(*) FROM messages"), 0);
  EXPECT_EQ(db.number("SELECT count(*) FROM queues"), 0);
  EXPECT_EQ(migration_steps().size(), static_cast<std::size_t>(kSchemaVersion));
}

TEST(SqliteStore, AVersionOneDatabaseOpensAndRecovers) {
  TempDir dir;
  auto m = make_message(7);
  {
    RawDatabase db(database_path(dir.path()));
    db.exec(kGoldenVersion1);
    db.exec("INSERT INTO queues (id, key) VALUES (3, 'queue:orders')");
    db.insert_message(41, 3, *m, encode_message(*m), 2);
  }
  SqliteStore store(sqlite_options(dir));
  auto recovered = open_and_recover(store);
  ASSERT_TRUE(recovered) << recovered.error().to_string();
  ASSERT_EQ(recovered->size(), 1u);
  EXPECT_EQ((*recovered)[0].queue, "queue:orders");
  EXPECT_EQ((*recovered)[0].delivery_count, 2u);
  testing::expect_same_message(*m, *(*recovered)[0].message);
  // New rows go after the old ones.
  store.start();
  Outcomes out;
  store.append({Record::added("queue:orders", make_message(8)), Record::acked("queue:orders", m->id)}, out.callback());
  ASSERT_TRUE(out.wait_for(1));
  EXPECT_EQ(out.failures(), 0u);
  store.close();
  RawDatabase db(database_path(dir.path()));
  EXPECT_EQ(db.number("SELECT seq FROM messages"), 42);
}

// Version 2 adds messages_by_lane for Store::scan; a version-1 file migrates in place and its
// rows scan like new ones, with the index serving the scan's range (no sort, no table scan).
TEST(SqliteStore, AVersionOneDatabaseMigratesAndItsRowsScanThroughTheLaneIndex) {
  TempDir dir;
  auto a = make_message(4), b = make_message(14), other = make_message(5);  // priorities 4, 4, 5
  {
    RawDatabase db(database_path(dir.path()));
    db.exec(kGoldenVersion1);
    db.exec("INSERT INTO queues (id, key) VALUES (3, 'queue:orders')");
    db.insert_message(10, 3, *a, encode_message(*a), 1);
    db.insert_message(11, 3, *other, encode_message(*other));
    db.insert_message(12, 3, *b, encode_message(*b));
  }
  SqliteStore store(sqlite_options(dir));
  ASSERT_TRUE(open_and_recover(store));
  store.start();
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Result<ScanResult>> got;
  store.scan("queue:orders", 4, Location{}, 10, [&](Result<ScanResult> r) {
    std::lock_guard lock(mu);
    got = std::move(r);
    cv.notify_all();
  });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return got.has_value(); }));
  }
  ASSERT_TRUE(*got) << got->error().to_string();
  const ScanResult& r = **got;
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].location, (Location{10, 0, 0}));
  EXPECT_EQ(r.messages[0].delivery_count, 1u);
  EXPECT_EQ(r.messages[1].location, (Location{12, 0, 0}));
  EXPECT_TRUE(r.exhausted);
  EXPECT_GE(r.next, (Location{13, 0, 0}));
  store.close();
  RawDatabase db(database_path(dir.path()));
  EXPECT_EQ(db.number("SELECT version FROM schema_version"), 2);
  const std::string plan =
      db.plan("SELECT seq, id_hi, id_lo, delivery_count, message FROM messages WHERE queue_id = 3 AND priority = 4 "
              "AND seq >= 0 ORDER BY seq LIMIT 129");
  EXPECT_NE(plan.find("messages_by_lane"), std::string::npos) << plan;
  EXPECT_EQ(plan.find("TEMP B-TREE"), std::string::npos) << "the index gives seq order: " << plan;
}

TEST(SqliteStore, ANewerSchemaVersionIsRefusedByName) {
  TempDir dir;
  {
    RawDatabase db(database_path(dir.path()));
    db.exec(kGoldenVersion1);
    db.exec("UPDATE schema_version SET version = 99");
  }
  SqliteStore store(sqlite_options(dir));
  auto opened = store.open();
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, Errc::corrupt_data);
  EXPECT_NE(opened.error().detail.find("unsupported schema version 99"), std::string::npos) << opened.error().detail;
}

TEST(SqliteStore, ASecondStoreOnTheSameFileIsRefused) {
  TempDir dir;
  SqliteStore first(sqlite_options(dir));
  ASSERT_TRUE(first.open());
  first.start();
  SqliteStore second(sqlite_options(dir));
  auto opened = second.open();
  ASSERT_FALSE(opened);
  EXPECT_EQ(opened.error().code, Errc::unavailable) << opened.error().to_string();
  second.close();
  first.close();
  SqliteStore third(sqlite_options(dir));
  EXPECT_TRUE(third.open());
}

TEST(SqliteStore, ARowThatDoesNotDecodeStopsStrictRecoveryAndIsSkippedOtherwise) {
  TempDir dir;
  auto good = make_message(1);
  auto bad = make_message(2);
  {
    SqliteStore store(sqlite_options(dir));
    ASSERT_TRUE(store.open());
    store.start();
    Outcomes out;
    store.append({Record::added("queue:q", good), Record::added("queue:q", bad)}, out.callback());
    ASSERT_TRUE(out.wait_for(1));
    store.close();
    RawDatabase db(database_path(dir.path()));
    db.exec("UPDATE messages SET message = x'63' WHERE seq = (SELECT max(seq) FROM messages)");
  }
  {
    SqliteStore store(sqlite_options(dir));
    auto recovered = open_and_recover(store);
    ASSERT_FALSE(recovered);
    EXPECT_EQ(recovered.error().code, Errc::corrupt_data);
    EXPECT_NE(recovered.error().detail.find("message seq 2"), std::string::npos) << recovered.error().detail;
    EXPECT_NE(recovered.error().detail.find("carrier.sqlite"), std::string::npos) << recovered.error().detail;
  }
  SqliteStore store(sqlite_options(dir, RecoveryMode::skip_corrupt));
  auto recovered = open_and_recover(store);
  ASSERT_TRUE(recovered) << recovered.error().to_string();
  ASSERT_EQ(recovered->size(), 1u);
  EXPECT_EQ((*recovered)[0].message->id, good->id);
}

TEST(SqliteStore, ADatabaseFileRemovedWhileOpenFailsAppendsUntilItIsBack) {
  TempDir dir;
  const auto path = database_path(dir.path());
  const auto aside = dir.path() / "moved-away.sqlite";
  SqliteStore store(sqlite_options(dir));
  ASSERT_TRUE(store.open());
  store.start();
  auto append = [&](std::uint64_t n) {
    Outcomes out;
    store.append({Record::added("queue:q", make_message(n))}, out.callback());
    EXPECT_TRUE(out.wait_for(1));
    return out.statuses().at(0);
  };
  ASSERT_TRUE(append(1));
  std::filesystem::rename(path, aside);
  for (std::uint64_t n : {2, 3}) {
    auto st = append(n);
    ASSERT_FALSE(st) << "a batch written into a file that is gone was reported durable";
    EXPECT_EQ(st.error().code, Errc::io_error);
    EXPECT_NE(st.error().detail.find("removed or replaced"), std::string::npos) << st.error().detail;
  }
  EXPECT_FALSE(std::filesystem::exists(path)) << "the store must not create a new, empty database";
  std::filesystem::rename(aside, path);
  ASSERT_TRUE(append(4)) << "the store did not recover when its file came back";
  store.close();
  SqliteStore again(sqlite_options(dir));
  auto recovered = open_and_recover(again);
  ASSERT_TRUE(recovered) << recovered.error().to_string();
  ASSERT_EQ(recovered->size(), 2u);
  EXPECT_EQ((*recovered)[0].message->correlation_id, "corr-1");
  EXPECT_EQ((*recovered)[1].message->correlation_id, "corr-4");
}

TEST(SqliteStore, QueuesWithoutMessagesAreDroppedAtOpen) {
  TempDir dir;
  {
    SqliteStore store(sqlite_options(dir));
    ASSERT_TRUE(store.open());
    store.start();
    Outcomes out;
    auto a = make_message(1);
    store.append({Record::added("queue:temp", a)}, out.callback());
    store.append({Record::acked("queue:temp", a->id), Record::added("queue:kept", make_message(2))}, out.callback());
    ASSERT_TRUE(out.wait_for(2));
    EXPECT_EQ(out.failures(), 0u);
  }
  {
    SqliteStore store(sqlite_options(dir));
    ASSERT_TRUE(store.open());
  }
  RawDatabase db(database_path(dir.path()));
  EXPECT_EQ(db.number("SELECT count(*) FROM queues"), 1);
  EXPECT_EQ(db.number("SELECT count(*) FROM queues WHERE key = 'queue:kept'"), 1);
}

}  // namespace
}  // namespace carrier::store::sqlite
