#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "base/result.hpp"
#include "core/queue_maintenance.hpp"
#include "model/message.hpp"

namespace carrier::core {
class Broker;
}

namespace carrier::admin {

// Purge and move of large queues, in chunks: each chunk is one post to the queue's owner shard
// (core/queue_maintenance), so the messages flowing through that shard wait for one chunk at
// most, not for the whole queue. Progress goes to the log once a second ("admin" logger) and
// the total in a last line; `done` gets how many messages were purged or moved.
// Runs on: `here`'s shard (each chunk on the queue's owner).
constexpr std::size_t kQueueWorkChunk = 10000;

void purge_in_chunks(core::Broker& here, std::string key, core::MessageFilter which, std::size_t limit,
                     std::function<void(Result<std::size_t>)> done, std::size_t chunk = kQueueWorkChunk);

// A copy (`remove` false) is one piece: its messages stay in the source, so a second chunk would
// take the same ones again.
void move_in_chunks(core::Broker& here, std::string key, model::Destination to, core::MessageFilter which,
                    std::size_t limit, bool remove, std::function<void(Result<std::size_t>)> done,
                    std::size_t chunk = kQueueWorkChunk);

}  // namespace carrier::admin
