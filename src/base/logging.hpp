#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>

namespace carrier::logging {

// One logger per module ("core", "store", "stomp", "net", ...), all writing to stderr.
// Codecs and core return errors and do not log; sessions, net and store do.
std::shared_ptr<spdlog::logger> get(std::string_view module);

// Sets the level of every logger, present and future. Accepts trace, debug, info, warn, error, off.
bool set_level(std::string_view level);

}  // namespace carrier::logging
