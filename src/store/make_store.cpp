#include "store/store.hpp"
#include "store/log/log_store.hpp"
#include "store/memory/memory_store.hpp"
#include "store/postgres/postgres_store.hpp"
#include "store/sqlite/sqlite_store.hpp"

namespace carrier::store {

Result<std::unique_ptr<Store>> make_store(const Options& options) {
  if (options.kind == "log") return std::unique_ptr<Store>(std::make_unique<log::LogStore>(options));
  if (options.kind == "memory") {
    return std::unique_ptr<Store>(std::make_unique<memory::MemoryStore>());
  }
  if (options.kind == "sqlite") {
    return std::unique_ptr<Store>(std::make_unique<sqlite::SqliteStore>(options));
  }
  if (options.kind == "postgres") {
    if (options.postgres_url.empty()) {
      return unexpected(Errc::invalid_argument,
                        "store kind \"postgres\" needs a connection string (--postgres URL or [postgres] url)");
    }
    if (auto valid = postgres::check_schema_name(options.postgres_schema); !valid) return unexpected(valid.error());
    return std::unique_ptr<Store>(std::make_unique<postgres::PostgresStore>(options));
  }
  return unexpected(Errc::invalid_argument,
                    "unknown store kind \"" + options.kind + "\" (known: log, sqlite, postgres, memory)");
}

}  // namespace carrier::store
