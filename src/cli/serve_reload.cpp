#include "cli/serve_reload.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "auth/user_syntax.hpp"
#include "base/log_format.hpp"
#include "base/logging.hpp"

namespace carrier::cli {

namespace {

std::shared_ptr<spdlog::logger> log() {
  static auto logger = logging::get("broker");
  return logger;
}

std::map<std::string, std::string> by_name(const std::vector<auth::User>& users) {
  std::map<std::string, std::string> out;
  for (const auto& u : users) out.emplace(u.name, u.password_hash);
  return out;
}

}  // namespace

void ConfigReload::reload() {
  const std::string file = flags_.config_file ? flags_.config_file->string() : std::string("(no file)");
  auto next = config::load(flags_);
  if (!next) {
    log()->error("SIGHUP: configuration {} not reloaded, everything stays as it was: {}", file, next.error().detail);
    return;
  }
  auto settings = config::read_settings(flags_.config_file);
  if (!settings) {
    log()->error("SIGHUP: configuration {} not reloaded, everything stays as it was: {}", file,
                 settings.error().detail);
    return;
  }
  const auto change = config::compare(settings_, *settings);
  if (next->log_level != running_.log_level) {
    (void)logging::set_level(next->log_level);
    log()->info("SIGHUP: log level {} (was {})", next->log_level, running_.log_level);
    running_.log_level = next->log_level;
  }
  if (next->log_format != running_.log_format) {
    (void)logging::set_format(next->log_format);
    log()->info("SIGHUP: log format {} (was {})", next->log_format, running_.log_format);
    running_.log_format = next->log_format;
  }
  if (std::find(change.live.begin(), change.live.end(), "policy") != change.live.end()) apply_policies(*next);
  apply_users(*next);
  if (disk_alarm_ != nullptr && next->store.disk_free_limit_bytes != running_.store.disk_free_limit_bytes) {
    disk_alarm_->set_limit(next->store.disk_free_limit_bytes);
    log()->info("SIGHUP: journal.disk_free_limit_bytes {} (was {})", next->store.disk_free_limit_bytes,
                running_.store.disk_free_limit_bytes);
    running_.store.disk_free_limit_bytes = next->store.disk_free_limit_bytes;
  }
  if (next->core.memory_budget_bytes != running_.core.memory_budget_bytes) apply_memory_budget(*next);
  for (const auto& key : change.restart) {
    log()->warn("SIGHUP: '{}' changed in {}, but cannot change while running: it takes effect at the next restart",
                key, file);
  }
  if (change.live.empty() && change.restart.empty()) log()->info("SIGHUP: no setting changed in {}", file);
  settings_ = std::move(*settings);
}

void ConfigReload::apply_policies(const config::Config& next) {
  const auto before = running_.core.policies.size();
  running_.core.policies = next.core.policies;
  // Each shard swaps its own table, between its other work.
  for (auto* broker : brokers_) {
    pool_.post(broker->shard(), [broker, policies = next.core.policies]() mutable {
      broker->context().replace_policies(std::move(policies));
    });
  }
  std::vector<std::string> matches;
  for (const auto& p : next.core.policies) matches.push_back(p.match);
  log()->info("SIGHUP: {} destination polic{} in force (were {}): {}; queues made before keep an overflow = block "
              "they had",
              matches.size(), matches.size() == 1 ? "y" : "ies", before, fmt::join(matches, ", "));
}

void ConfigReload::apply_memory_budget(const config::Config& next) {
  const auto before = running_.core.memory_budget_bytes;
  const auto after = next.core.memory_budget_bytes;
  running_.core.memory_budget_bytes = after;
  if (memory_ == nullptr) {
    log()->info("SIGHUP: core.memory_budget_bytes {} (was {}) has no effect: the {} store keeps every message in memory",
                after, before, running_.store.kind);
    return;
  }
  memory_->set_budget(after);
  // Lowered: each shard pages out (tails first) until the gauge is under the new budget. Raised:
  // nothing is read back at once; what is paged or cold comes back as consumers reach it, and
  // less of what is read back goes out again.
  for (auto* broker : brokers_) {
    pool_.post(broker->shard(), [broker]() { broker->owned_queues().page_if_over_budget(); });
  }
  log()->info("SIGHUP: core.memory_budget_bytes {} (was {}); {} bytes of messages held now{}", after, before,
              memory_->used(), after == 0 ? ", paging off: what is paged or cold stays so until read back" : "");
}

void ConfigReload::apply_users(const config::Config& next) {
  const auto before = by_name(running_.auth.users);
  const auto after = by_name(next.auth.users);
  if (before == after) return;
  if (auto st = auth_.replace_users(next.auth.users); !st) {
    log()->error("SIGHUP: users not reloaded, the previous {} stay: {}", before.size(), st.error().detail);
    return;
  }
  std::vector<std::string> added, removed, changed;
  for (const auto& [name, hash] : after) {
    auto it = before.find(name);
    if (it == before.end()) {
      added.push_back(auth::printable_name(name));
    } else if (it->second != hash) {
      changed.push_back(auth::printable_name(name));
    }
  }
  for (const auto& [name, hash] : before) {
    if (!after.contains(name)) removed.push_back(auth::printable_name(name));
  }
  log()->info("SIGHUP: {} user(s) in force; added [{}], removed [{}], new password [{}]; open connections stay "
              "logged in",
              after.size(), fmt::join(added, ", "), fmt::join(removed, ", "), fmt::join(changed, ", "));
  running_.auth.users = next.auth.users;
}

}  // namespace carrier::cli
