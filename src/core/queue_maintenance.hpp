#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "model/message.hpp"

namespace carrier::core {

class Broker;

// An operator's work on the messages of one queue (a queue or a named subscription's queue,
// named by its store key): browse, purge, move or copy by selector. Only ready messages are
// touched: those a consumer holds unacked stay where they are. The calling shard posts to the
// queue's owner and gets `done` back on itself.
// Runs on: `here`'s shard (the work: the queue's owner shard).

using MessageFilter = std::function<bool(const model::Message&)>;

struct BrowsedMessage {
  model::MessagePtr message;
  std::uint32_t delivery_count = 0;
  bool redelivered = false;
};

// Up to `limit` messages from the `offset`-th on, left in place: the ready ones by priority
// (lowest first) and arrival, then those consumers hold unacked.
void browse_queue(Broker& here, std::string key, std::size_t offset, std::size_t limit,
                  std::function<void(Result<std::vector<BrowsedMessage>>)> done);

// Removes up to `limit` ready messages `which` accepts (all if empty); `done` gets how many,
// once their removal is durable.
void purge_queue(Broker& here, std::string key, MessageFilter which, std::size_t limit,
                 std::function<void(Result<std::size_t>)> done);

// Sends a copy (new id, same headers and body) of up to `limit` ready messages `which` accepts
// to `to`, and with `remove` takes them out of `key` once the copies are taken (durable, for
// persistent ones): dead-letter replay. Until then they are out of the source's ready list, so
// no consumer gets them twice; if the send fails they go back. `done` gets how many moved.
void move_messages(Broker& here, std::string key, model::Destination to, MessageFilter which, std::size_t limit,
                   bool remove, std::function<void(Result<std::size_t>)> done);

}  // namespace carrier::core
