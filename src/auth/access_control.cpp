#include "auth/access_control.hpp"

namespace carrier::auth {

AccessControl::AccessControl(core::Executor& executor, std::shared_ptr<const Acl> acl)
    : executor_(executor), slots_(executor.shard_count()), enabled_(acl != nullptr) {
  for (auto& slot : slots_) slot.acl = acl;
}

void AccessControl::replace(std::shared_ptr<const Acl> acl) {
  const std::uint64_t generation = ++generation_;
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    const model::ShardId shard(static_cast<std::uint32_t>(i));
    executor_.post(shard, [this, shard, acl, generation] {
      auto& slot = slots_[shard.value()];
      slot.acl = acl;
      slot.generation = generation;
    });
  }
}

}  // namespace carrier::auth
