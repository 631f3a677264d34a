#include "config/settings_diff.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <sstream>

namespace carrier::config {

namespace {

void flatten(const toml::table& table, const std::string& prefix, Settings& out) {
  for (const auto& [key, node] : table) {
    const std::string name = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    if (const auto* sub = node.as_table()) {
      flatten(*sub, name, out);
      continue;
    }
    std::ostringstream text;
    node.visit([&text](const auto& n) { text << n; });
    out[name] = text.str();
  }
}

bool is_live(std::string_view key) {
  constexpr std::string_view kLive[] = {"log_level", "log.format", "policy", "auth.user", "auth.users_file",
                                        "auth.acl_file", "journal.disk_free_limit_bytes",
                                        "core.memory_budget_bytes"};
  return std::find(std::begin(kLive), std::end(kLive), key) != std::end(kLive);
}

}  // namespace

Result<Settings> settings_of(std::string_view text, std::string_view source_name) {
  Settings out;
  try {
    const auto document = toml::parse(text, source_name);
    flatten(document, "", out);
  } catch (const toml::parse_error& e) {
    return unexpected(Errc::invalid_argument, fmt::format("{}: {}", source_name, e.description()));
  }
  return out;
}

Result<Settings> read_settings(const std::optional<std::filesystem::path>& file) {
  if (!file) return Settings{};
  try {
    const auto document = toml::parse_file(file->string());
    Settings out;
    flatten(document, "", out);
    return out;
  } catch (const toml::parse_error& e) {
    return unexpected(Errc::invalid_argument, fmt::format("{}: {}", file->string(), e.description()));
  }
}

SettingsChange compare(const Settings& before, const Settings& after) {
  SettingsChange change;
  auto note = [&change](const std::string& key) { (is_live(key) ? change.live : change.restart).push_back(key); };
  for (const auto& [key, value] : before) {
    auto it = after.find(key);
    if (it == after.end() || it->second != value) note(key);
  }
  for (const auto& [key, value] : after) {
    if (!before.contains(key)) note(key);
  }
  std::sort(change.live.begin(), change.live.end());
  std::sort(change.restart.begin(), change.restart.end());
  return change;
}

}  // namespace carrier::config
