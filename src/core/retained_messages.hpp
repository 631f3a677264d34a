#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

#include "core/destination_tree.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

// Retained messages (MQTT): the last retained message of each topic, kept (and stored, under
// its QueueKey::retained key) by the shard that owns the topic's key; a subscription asking for them
// gets every shard's matching ones. An empty retained payload only clears.
// Runs on: its shard.
class RetainedMessages {
 public:
  explicit RetainedMessages(ShardContext& shard) : shard_(shard) {}
  RetainedMessages(const RetainedMessages&) = delete;
  RetainedMessages& operator=(const RetainedMessages&) = delete;

  // From any shard: `message` replaces its topic's retained message on the owner.
  void retain(model::MessagePtr message);
  // From any shard: every shard sends `target` its retained messages matching `filter`.
  void send(std::string filter, TopicSubscriber target);
  // A recovered retained message of `topic`, before serving.
  void restore(const std::string& topic, const model::MessagePtr& m);

  std::size_t size() const { return retained_.size(); }

 private:
  // On the owner: the replacement itself.
  void replace(const std::string& topic, const model::MessagePtr& message);
  // On each shard: this shard's matching messages, posted to the target.
  void send_matching(const std::string& filter, const TopicSubscriber& target);

  ShardContext& shard_;
  std::unordered_map<std::string, model::MessagePtr> retained_;  // owned here: topic name -> message
};

}  // namespace carrier::core
