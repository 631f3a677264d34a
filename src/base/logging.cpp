#include "base/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <mutex>

namespace carrier::logging {

namespace {
// Loggers are created at most once per module name, from any thread; spdlog's registry
// is itself thread-safe, this mutex only keeps get-or-create atomic.
std::mutex g_create_mutex;
}  // namespace

std::shared_ptr<spdlog::logger> get(std::string_view module) {
  std::string name(module);
  if (auto existing = spdlog::get(name)) return existing;
  std::lock_guard lock(g_create_mutex);
  if (auto existing = spdlog::get(name)) return existing;
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%-5l%$ [%n] %v");
  logger->set_level(spdlog::get_level());
  return logger;
}

bool set_level(std::string_view level) {
  auto parsed = spdlog::level::from_str(std::string(level));
  if (parsed == spdlog::level::off && level != "off") return false;
  spdlog::set_level(parsed);
  spdlog::apply_all([parsed](const std::shared_ptr<spdlog::logger>& l) { l->set_level(parsed); });
  return true;
}

}  // namespace carrier::logging
