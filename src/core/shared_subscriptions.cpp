#include "core/shared_subscriptions.hpp"

#include <algorithm>

#include "core/broker.hpp"
#include "core/named_subscriptions.hpp"
#include "core/owned_queues.hpp"

namespace carrier::core {

using model::MessageId;
using model::ShardId;

void SharedSubscriptions::holder_op(const std::string& name, std::function<void(Completion next)> op) {
  auto& ops = ops_[name];
  ops.push_back(std::move(op));
  if (ops.size() == 1) run_holder_op(name);
}

void SharedSubscriptions::run_holder_op(const std::string& name) {
  auto it = ops_.find(name);
  if (it == ops_.end() || it->second.empty()) return;
  auto op = it->second.front();
  op([this, name](Status) {
    auto it = ops_.find(name);
    if (it == ops_.end()) return;
    it->second.pop_front();
    if (it->second.empty()) {
      ops_.erase(it);
    } else {
      run_holder_op(name);
    }
  });
}

void SharedSubscriptions::add_holder(SubscribeRequest request, Completion reply) {
  const std::string name = request.subscription_name;
  holder_op(name, [this, request = std::move(request), reply = std::move(reply)](Completion next) mutable {
    const std::string& name = request.subscription_name;
    const NamedEntry* existing = named_.find(name);
    auto finish = [next, reply](Status st) mutable {
      next(st);
      if (reply) reply(std::move(st));
    };
    NamedEntry entry;
    MessageId previous;
    bool was_durable = false;
    if (existing != nullptr) {
      const auto& holders = existing->def.holders;
      if (std::binary_search(holders.begin(), holders.end(), request.holder) ||
          existing->def.filter != request.destination.name) {
        finish(ok());
        return;
      }
      entry = *existing;
      was_durable = entry.def.durable;
      if (was_durable) previous = entry.definition_id;
    } else {
      entry.def = NamedSubscription{name, request.destination.name, true, request.selector_text, {}};
      entry.selector = request.selector;
      entry.no_local_origin = request.no_local_origin;
    }
    auto& holders = entry.def.holders;
    holders.insert(std::lower_bound(holders.begin(), holders.end(), request.holder), request.holder);
    entry.def.durable = true;
    entry.definition_id = shard_.ids.next();
    named_.replace(std::move(entry), previous, was_durable, std::move(finish));
  });
}

void SharedSubscriptions::release_holder(std::string name, std::string holder, Completion done) {
  const ShardId owner = shard_.owner_of(NamedSubscriptions::queue_key(name));
  auto reply = [this, done = std::move(done)](Status st) mutable {
    shard_.complete_on(shard_.self, std::move(done), std::move(st));
  };
  shard_.post_to(owner, [name = std::move(name), holder = std::move(holder), reply = std::move(reply)](Broker& b) mutable {
    b.shared_subscriptions().remove_holder(std::move(name), std::move(holder), std::move(reply));
  });
}

void SharedSubscriptions::remove_holder(std::string name, std::string holder, Completion reply) {
  holder_op(name, [this, name, holder = std::move(holder), reply = std::move(reply)](Completion next) mutable {
    auto finish = [next, reply](Status st) mutable {
      next(st);
      if (reply) reply(std::move(st));
    };
    const NamedEntry* existing = named_.find(name);
    if (existing == nullptr) {
      finish(ok());
      return;
    }
    const auto& current = existing->def.holders;
    auto at = std::lower_bound(current.begin(), current.end(), holder);
    if (at == current.end() || *at != holder) {
      finish(ok());
      return;
    }
    NamedEntry entry = *existing;
    const MessageId previous = entry.def.durable ? entry.definition_id : MessageId{};
    entry.def.holders.erase(entry.def.holders.begin() + (at - current.begin()));
    if (entry.def.holders.empty()) {
      auto* q = queues_.find(NamedSubscriptions::queue_key(name));
      if (q == nullptr || q->queue->consumer_count() == 0) {
        // The last holder gone and nobody attached: the subscription ends, with its messages.
        named_.remove(name, std::move(finish));
        return;
      }
      // Consumers without a holder remain: it goes on, no longer stored, until they leave.
      entry.def.durable = false;
      entry.definition_id = MessageId{};
    } else {
      entry.definition_id = shard_.ids.next();
    }
    named_.replace(std::move(entry), previous, true, std::move(finish));
  });
}

}  // namespace carrier::core
