#pragma once

#include <span>
#include <string>

#include "base/result.hpp"

struct sqlite3;

// The SQLite store's tables and how a database is brought up to date (docs/storage.md,
// "SQLite"). Runs on: the thread that opens the store.
namespace carrier::store::sqlite {

// The version this build writes. A database with a higher version is refused by name: an old
// binary must not write into tables whose meaning it does not know.
inline constexpr int kSchemaVersion = 2;

// Step i takes a database from version i to i + 1; version 0 is an empty file. A new version
// appends a step and never edits an old one (a database made by an older build must still
// migrate the same way).
std::span<const char* const> migration_steps();

// Reads schema_version (0 when the table does not exist) and applies the missing steps, each in
// its own transaction with the version bump. `where` names the file in errors.
Status migrate(sqlite3* db, const std::string& where);

// The version recorded in the database (0 for an empty one).
Result<int> schema_version(sqlite3* db, const std::string& where);

}  // namespace carrier::store::sqlite
