#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "store/postgres/pg_connection.hpp"

// The PostgreSQL store's tables, in a schema of their own (Options::postgres_schema, default
// "carrier"), and how they are brought up to date (docs/storage.md, "PostgreSQL"). Runs on:
// the thread that opens the store.
namespace carrier::store::postgres {

// The version this build writes; a higher one is refused by name.
inline constexpr int kSchemaVersion = 2;

// A schema name Carrier accepts: [a-z_][a-z0-9_]*, at most 63 bytes (so it needs no quoting
// and is never folded). Errc::invalid_argument naming it otherwise.
Status check_schema_name(std::string_view name);

// Step i takes the schema from version i to i + 1 (version 0: nothing there yet). `{s}` stands
// for the schema name. New versions append a step; old steps never change.
std::span<const char* const> migration_steps();

// Reads {schema}.schema_version (0 when absent) and applies the missing steps in one transaction.
Status migrate(PgConnection& c, const std::string& schema);

Result<int> schema_version(PgConnection& c, const std::string& schema);

}  // namespace carrier::store::postgres
