#include "store/sqlite/sqlite_schema.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

namespace carrier::store::sqlite {

namespace {

// Version 1. Message ids are stored as two signed 64-bit halves (SQLite has no unsigned type;
// the bits are kept as they are). `seq` is the append order, assigned by the store's writer;
// being the rowid, recovery reads the table in its natural order. The columns beside `message`
// (the message_codec bytes, the only thing recovery reads) are for operators' queries.
constexpr const char* kVersion1 = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version (version) VALUES (0);
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

// Version 2: scans of a queue's cold tail (Store::scan) read one queue's rows of one priority in
// seq order from a given seq; this index serves that range exactly.
constexpr const char* kVersion2 = R"sql(
CREATE INDEX messages_by_lane ON messages (queue_id, priority, seq);
)sql";

constexpr const char* kSteps[] = {kVersion1, kVersion2};
static_assert(std::size(kSteps) == kSchemaVersion, "one migration step per schema version");

Status exec(sqlite3* db, const char* sql, const std::string& where, std::string_view what) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return ok();
  std::string text = message ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  const Errc code = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED ? Errc::unavailable : Errc::io_error;
  return unexpected(code, fmt::format("sqlite {}: {}: {}", where, what, text));
}

}  // namespace

std::span<const char* const> migration_steps() { return kSteps; }

Result<int> schema_version(sqlite3* db, const std::string& where) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
                              -1, &stmt, nullptr);
  int version = 0;
  bool exists = false;
  if (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) exists = sqlite3_column_int(stmt, 0) > 0;
  sqlite3_finalize(stmt);
  if (rc != SQLITE_ROW) {
    const Errc code = (rc & 0xff) == SQLITE_BUSY ? Errc::unavailable : Errc::io_error;
    return unexpected(code, fmt::format("sqlite {}: cannot read the schema: {}", where, sqlite3_errmsg(db)));
  }
  if (!exists) return 0;
  rc = sqlite3_prepare_v2(db, "SELECT version FROM schema_version", -1, &stmt, nullptr);
  int rows = 0;
  while (rc == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
    version = sqlite3_column_int(stmt, 0);
    ++rows;
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_OK) {
    return unexpected(Errc::io_error, fmt::format("sqlite {}: cannot read schema_version: {}", where, sqlite3_errmsg(db)));
  }
  if (rows != 1) {
    return unexpected(Errc::corrupt_data, fmt::format("sqlite {}: schema_version has {} rows (expected 1)", where, rows));
  }
  return version;
}

Status migrate(sqlite3* db, const std::string& where) {
  auto version = schema_version(db, where);
  if (!version) return unexpected(std::move(version).error());
  if (*version > kSchemaVersion || *version < 0) {
    return unexpected(Errc::corrupt_data,
                      fmt::format("sqlite {}: unsupported schema version {} (this build reads versions up to {})", where,
                                  *version, kSchemaVersion));
  }
  for (int v = *version; v < kSchemaVersion; ++v) {
    if (auto st = exec(db, "BEGIN IMMEDIATE", where, "migration"); !st) return st;
    const std::string bump = fmt::format("UPDATE schema_version SET version = {}", v + 1);
    Status step = exec(db, kSteps[v], where, fmt::format("migration to schema version {}", v + 1));
    if (step) step = exec(db, bump.c_str(), where, "schema version update");
    if (step) step = exec(db, "COMMIT", where, "migration commit");
    if (!step) {
      (void)exec(db, "ROLLBACK", where, "migration rollback");
      return step;
    }
  }
  return ok();
}

}  // namespace carrier::store::sqlite
