#pragma once

// What the configuration file's keys (config.cpp) and the command-line flags over them
// (config_load.cpp) share: the values both accept, and the file's keys applied to a Config.

#include <string_view>

#include "base/result.hpp"
#include "config/config.hpp"
#include "store/store.hpp"

namespace carrier::config {

inline constexpr std::string_view kLogLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
inline constexpr std::string_view kLogFormats[] = {"text", "json"};
// Follows store::make_store: a new backend adds its name here and in docs/configuration.md.
inline constexpr std::string_view kStoreKinds[] = {"log", "sqlite", "postgres", "memory"};
inline constexpr std::string_view kRecoveryModes[] = {"strict", "skip-corrupt"};

// One of kRecoveryModes as the store's enum.
store::RecoveryMode recovery_mode(std::string_view name);

// Applies the keys of a TOML document to `config`; an error names the file (`source_name`),
// the line and the key.
Status apply_toml(std::string_view text, std::string_view source_name, Config& config);

}  // namespace carrier::config
