#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "auth/acl.hpp"
#include "core/executor.hpp"

namespace carrier::auth {

// The ACL in force, one copy of the pointer per shard so that a check reads only its own
// shard's memory (no lock, no atomic). Without an ACL file every check allows (today's
// behaviour); with one, what it does not allow is refused.
//
// Runs on: made by the main thread before the shards start; replace() from any thread (SIGHUP)
// posts the new ACL to every shard; slot() on the shard it names.
class AccessControl {
 public:
  struct alignas(64) Slot {
    std::shared_ptr<const Acl> acl;  // null: no ACL file, everything is allowed
    std::uint64_t generation = 0;    // bumped by each replace(): connections rebuild their grant
  };

  AccessControl(core::Executor& executor, std::shared_ptr<const Acl> acl);

  // New operations on every shard are checked against `acl` once the post has run there;
  // subscriptions already made stay.
  void replace(std::shared_ptr<const Acl> acl);

  const Slot& slot(model::ShardId shard) const { return slots_[shard.value()]; }
  bool enabled() const { return enabled_; }

 private:
  core::Executor& executor_;
  std::vector<Slot> slots_;  // index = shard
  std::uint64_t generation_ = 0;  // main thread only
  bool enabled_;                  // fixed at start: whether an acl_file is configured
};

}  // namespace carrier::auth
