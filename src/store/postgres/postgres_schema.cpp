#include "store/postgres/postgres_schema.hpp"

#include <libpq-fe.h>

#include <fmt/format.h>

#include <cstdlib>

namespace carrier::store::postgres {

namespace {

// Version 1. Message ids are two signed 64-bit halves (the bits as they are). `seq` is the
// append order, assigned by the store's one writer; recovery reads by it. Queue keys are bytea:
// destination names are whatever bytes a client sent, and a text column would refuse some of
// them (or depend on the database's encoding). The message column is stored out of line
// without compression: bodies are usually compressed already, and TOAST compression would
// cost the writer CPU on every large message.
constexpr const char* kVersion1 = R"sql(
CREATE SCHEMA IF NOT EXISTS {s};
CREATE TABLE {s}.schema_version (version integer NOT NULL);
INSERT INTO {s}.schema_version (version) VALUES (0);
CREATE TABLE {s}.queues (
  id  bigint PRIMARY KEY,
  key bytea NOT NULL UNIQUE
);
CREATE TABLE {s}.messages (
  seq            bigint PRIMARY KEY,
  queue_id       bigint NOT NULL,
  id_hi          bigint NOT NULL,
  id_lo          bigint NOT NULL,
  priority       smallint NOT NULL,
  expires_ms     bigint NOT NULL,
  deliver_at_ms  bigint NOT NULL,
  delivery_count integer NOT NULL DEFAULT 0,
  message        bytea NOT NULL
);
ALTER TABLE {s}.messages ALTER COLUMN message SET STORAGE EXTERNAL;
CREATE UNIQUE INDEX messages_by_queue ON {s}.messages (queue_id, id_hi, id_lo);
)sql";

// Version 2: scans of a queue's cold tail (Store::scan) read one queue's rows of one priority in
// seq order from a given seq; this index serves that range exactly.
constexpr const char* kVersion2 = R"sql(
CREATE INDEX messages_by_lane ON {s}.messages (queue_id, priority, seq);
)sql";

constexpr const char* kSteps[] = {kVersion1, kVersion2};
static_assert(std::size(kSteps) == kSchemaVersion, "one migration step per schema version");

std::string with_schema(std::string_view sql, const std::string& schema) {
  std::string out;
  for (std::size_t i = 0; i < sql.size(); ++i) {
    if (sql.compare(i, 3, "{s}") == 0) {
      out += schema;
      i += 2;
    } else {
      out += sql[i];
    }
  }
  return out;
}

}  // namespace

Status check_schema_name(std::string_view name) {
  bool good = !name.empty() && name.size() <= 63 && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) good = good && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (good) return ok();
  return unexpected(Errc::invalid_argument,
                    fmt::format("postgres schema \"{}\": expected lower-case letters, digits and _, "
                                "not starting with a digit, at most 63 bytes",
                                name.substr(0, 80)));
}

std::span<const char* const> migration_steps() { return kSteps; }

Result<int> schema_version(PgConnection& c, const std::string& schema) {
  Params p;
  const std::string table = schema + ".schema_version";
  p.add(table.data(), table.size());
  auto exists = c.exec("SELECT to_regclass($1) IS NOT NULL", p);
  if (!exists) return unexpected(std::move(exists).error());
  if (std::string_view(PQgetvalue(exists->get(), 0, 0)) != "t") return 0;
  auto rows = c.exec("SELECT version FROM " + table);
  if (!rows) return unexpected(std::move(rows).error());
  if (PQntuples(rows->get()) != 1) {
    return unexpected(Errc::corrupt_data,
                      fmt::format("postgres: {} has {} rows (expected 1)", table, PQntuples(rows->get())));
  }
  return std::atoi(PQgetvalue(rows->get(), 0, 0));
}

Status migrate(PgConnection& c, const std::string& schema) {
  auto version = schema_version(c, schema);
  if (!version) return unexpected(std::move(version).error());
  if (*version > kSchemaVersion || *version < 0) {
    return unexpected(Errc::corrupt_data,
                      fmt::format("postgres: schema {}: unsupported schema version {} (this build reads versions up to {})",
                                  schema, *version, kSchemaVersion));
  }
  if (*version == kSchemaVersion) return ok();
  if (auto begun = c.exec("BEGIN"); !begun) return unexpected(std::move(begun).error());
  Status st = ok();
  for (int v = *version; st && v < kSchemaVersion; ++v) {
    // A multi-statement string runs with the simple protocol (no parameters).
    PgResult r(PQexec(c.get(), with_schema(kSteps[v], schema).c_str()));
    if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      st = unexpected(c.error(fmt::format("migration of schema {} to version {}", schema, v + 1), r.get()));
      break;
    }
    auto bumped = c.exec(fmt::format("UPDATE {}.schema_version SET version = {}", schema, v + 1));
    if (!bumped) st = unexpected(std::move(bumped).error());
  }
  if (st) {
    auto committed = c.exec("COMMIT");
    if (!committed) st = unexpected(std::move(committed).error());
  }
  if (!st) (void)c.exec("ROLLBACK");
  return st;
}

}  // namespace carrier::store::postgres
