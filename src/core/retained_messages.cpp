#include "core/retained_messages.hpp"

#include <utility>
#include <vector>

#include "core/broker.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Message;
using model::MessagePtr;
using model::ShardId;

void RetainedMessages::retain(MessagePtr message) {
  auto key = model::QueueKey::retained(message->destination.name);
  shard_.post_to(key.owner_shard(shard_.shard_count()), [topic = key.name(), message = std::move(message)](Broker& b) {
    b.retained().replace(topic, message);
  });
}

void RetainedMessages::replace(const std::string& topic, const MessagePtr& message) {
  store::Batch batch;
  const std::string key = model::QueueKey::format(model::QueueKind::retained, topic);
  auto it = retained_.find(topic);
  if (it != retained_.end()) {
    batch.push_back(store::Record::acked(key, it->second->id));
    shard_.account_release(*it->second);
    retained_.erase(it);
  }
  // An empty retained payload only clears (MQTT).
  if (message->body_size() != 0) {
    auto copy = std::make_shared<Message>(*message);
    copy->from_retained = true;
    copy->origin = 0;
    batch.push_back(store::Record::added(key, copy));
    shard_.account_hold(*copy);
    retained_.emplace(topic, std::move(copy));
  }
  if (!batch.empty()) shard_.store.append(std::move(batch), [](Status) {});
}

void RetainedMessages::send(std::string filter, TopicSubscriber target) {
  for (std::size_t s = 0; s < shard_.shard_count(); ++s) {
    shard_.post_to(ShardId(static_cast<std::uint32_t>(s)),
                   [filter, target](Broker& b) { b.retained().send_matching(filter, target); });
  }
}

void RetainedMessages::send_matching(const std::string& filter, const TopicSubscriber& target) {
  std::vector<Routed> to_queue;
  std::vector<std::pair<ConsumerId, MessagePtr>> to_private;
  for (const auto& [topic, m] : retained_) {
    if (!DestinationTree::filter_matches(filter, topic)) continue;
    if (target.queue_key.empty()) {
      to_private.emplace_back(target.id, m);
    } else {
      to_queue.push_back(Routed{target.queue_key, m});
    }
  }
  if (!to_private.empty()) {
    shard_.post_to(target.home, [batch = std::move(to_private)](Broker& h) mutable { h.topics().enqueue(std::move(batch)); });
  }
  if (!to_queue.empty()) {
    shard_.post_to(target.home,
                   [batch = std::move(to_queue)](Broker& o) mutable { o.owned_queues().enqueue(std::move(batch), nullptr); });
  }
}

void RetainedMessages::restore(const std::string& topic, const MessagePtr& m) {
  auto copy = std::make_shared<Message>(*m);
  copy->from_retained = true;
  shard_.account_hold(*copy);
  retained_[topic] = std::move(copy);
}

}  // namespace carrier::core
