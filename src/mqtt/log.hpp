#pragma once

#include <spdlog/logger.h>

#include <memory>

#include "base/logging.hpp"

namespace carrier::mqtt {

// The "mqtt" logger, looked up once for every file of the module.
inline const std::shared_ptr<spdlog::logger>& log() {
  static const auto logger = logging::get("mqtt");
  return logger;
}

}  // namespace carrier::mqtt
