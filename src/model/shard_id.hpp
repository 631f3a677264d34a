#pragma once

#include <cstdint>

#include "base/strong_id.hpp"

namespace carrier::model {

// A shard: one thread with its own Broker. Keys are owned by shards (QueueKey::owner_shard),
// connections live on one; net hands them out, core posts between them.
struct ShardIdTag {};
using ShardId = StrongId<std::uint32_t, ShardIdTag>;

}  // namespace carrier::model
