#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

namespace carrier::config {

// A configuration file's settings flattened: "table.key" -> the value as TOML text. An array
// (of tables too: [[policy]], [[auth.user]]) is one setting, its whole text.
using Settings = std::map<std::string, std::string>;

// The settings of `text` (a TOML document; a parse error is an Errc::invalid_argument).
Result<Settings> settings_of(std::string_view text, std::string_view source_name);
// The same for a file; none (no file) is no settings.
Result<Settings> read_settings(const std::optional<std::filesystem::path>& file);

// What a reload found different between two files' settings, split into what `carrier serve`
// applies live and what takes a restart.
struct SettingsChange {
  std::vector<std::string> live;     // "log_level", "log.format", "policy", "auth.user"
  std::vector<std::string> restart;  // every other key that was added, removed or changed
};

// Keys applied live: log_level, log.format, policy, auth.user, auth.users_file (the users are
// read again), auth.acl_file; the files behind TLS keys are read again, but a changed key
// (another file name) takes a restart.
SettingsChange compare(const Settings& before, const Settings& after);

}  // namespace carrier::config
