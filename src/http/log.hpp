#pragma once

#include <spdlog/logger.h>

#include <memory>

#include "base/logging.hpp"

namespace carrier::http {

// The "http" logger, looked up once for every file of the module.
inline const std::shared_ptr<spdlog::logger>& log() {
  static const auto logger = logging::get("http");
  return logger;
}

}  // namespace carrier::http
