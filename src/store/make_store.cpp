#include "store/store.hpp"
#include "store/log/log_store.hpp"
#include "store/memory/memory_store.hpp"

namespace carrier::store {

Result<std::unique_ptr<Store>> make_store(const Options& options) {
  if (options.kind == "log") return std::unique_ptr<Store>(std::make_unique<log::LogStore>(options));
  if (options.kind == "memory") {
    return std::unique_ptr<Store>(std::make_unique<memory::MemoryStore>());
  }
  return unexpected(Errc::invalid_argument,
                    "unknown store kind \"" + options.kind + "\" (known: log, memory)");
}

}  // namespace carrier::store
