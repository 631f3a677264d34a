#pragma once

#include "model/message.hpp"

namespace carrier::core {

// Told when a consumer that counts as local demand comes or goes (federation advertises the
// destinations a node has consumers for). Consumers subscribed with
// SubscribeRequest::bridge are not counted: a link's own forwarding consumers would otherwise
// advertise demand back to where it came from.
// Runs on: the consumer's home shard; an implementation posts to wherever it keeps its state.
class DemandObserver {
 public:
  virtual ~DemandObserver() = default;
  // `destination` as subscribed: a queue, a queue filter or a topic filter.
  virtual void consumer_added(const model::Destination& destination) = 0;
  virtual void consumer_removed(const model::Destination& destination) = 0;
};

}  // namespace carrier::core
