#pragma once

#include <vector>

#include "auth/authenticator.hpp"
#include "config/config.hpp"
#include "config/settings_diff.hpp"
#include "core/broker.hpp"
#include "core/disk_alarm.hpp"
#include "net/shard_pool.hpp"

namespace carrier::cli {

// What SIGHUP changes without a restart (docs/configuration.md, "Reloading"): the log level and
// format, the destination policies, the users (inline and the users file), the disk free limit,
// the paging budget. The ACL and the TLS
// certificates reload beside it (serve.cpp). Every outcome is logged: what changed, what failed
// and was kept, and each changed key that takes a restart.
// Lifecycle: made by `carrier serve` once serving; outlives the signal handler.
// Runs on: the signal thread; it reaches the shards only by posts.
class ConfigReload {
 public:
  ConfigReload(config::Flags flags, config::Config& running, config::Settings settings, auth::Authenticator& auth,
               std::vector<core::Broker*> brokers, net::ShardPool& pool)
      : flags_(std::move(flags)),
        running_(running),
        settings_(std::move(settings)),
        auth_(auth),
        brokers_(std::move(brokers)),
        pool_(pool) {}

  void reload();
  // [journal] disk_free_limit_bytes changes live on this alarm (null: no disk limit is watched).
  void set_disk_alarm(core::DiskAlarm* alarm) { disk_alarm_ = alarm; }
  // [core] memory_budget_bytes changes live on this gauge; null: the store keeps every message
  // in memory anyway (the memory store), so the budget stays 0.
  void set_memory(core::MemoryGauge* memory) { memory_ = memory; }

 private:
  void apply_policies(const config::Config& next);
  void apply_users(const config::Config& next);
  void apply_memory_budget(const config::Config& next);

  config::Flags flags_;
  config::Config& running_;     // kept up to date with what was applied
  config::Settings settings_;   // the file's settings as last applied
  auth::Authenticator& auth_;
  std::vector<core::Broker*> brokers_;
  net::ShardPool& pool_;
  core::DiskAlarm* disk_alarm_ = nullptr;
  core::MemoryGauge* memory_ = nullptr;
};

}  // namespace carrier::cli
