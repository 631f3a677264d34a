#pragma once

#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "core/broker_types.hpp"
#include "core/shard_context.hpp"

namespace carrier::core {

class NamedSubscriptions;
class OwnedQueues;

// Shared subscriptions kept by holders. A shared subscription is a named subscription whose
// consumers compete for its messages; some of its members may be sessions that persist (a
// holder, named by the protocol: an MQTT client id for `$share` groups, a JMS client's durable
// membership), others not. While any holder remains the subscription is durable (definition
// and persistent messages in the store, the holders listed in the definition). The last
// holder's release deletes it with its messages, or, with consumers still attached, makes it
// non-durable: it then goes with its last consumer. Members without a holder attach to it as
// it is (NamedSubscriptions::subscribe).
// Holder changes of one subscription run one at a time on its owner, each reading the
// definition the previous one left.
// Runs on: the shard owning the subscription's queue (release_holder: any shard).
class SharedSubscriptions {
 public:
  SharedSubscriptions(ShardContext& shard, NamedSubscriptions& named, OwnedQueues& queues)
      : shard_(shard), named_(named), queues_(queues) {}
  SharedSubscriptions(const SharedSubscriptions&) = delete;
  SharedSubscriptions& operator=(const SharedSubscriptions&) = delete;

  // From any shard: takes `holder` off the subscription `name`; `done` there.
  void release_holder(std::string name, std::string holder, Completion done);
  // On the owner: adds the request's holder to the subscription it names (making it, durable,
  // if it does not exist). A subscription of another filter is left as it is.
  void add_holder(SubscribeRequest request, Completion reply);
  // On the owner: the release itself.
  void remove_holder(std::string name, std::string holder, Completion reply);

 private:
  // Queues `op` behind the subscription's running holder change; `op` calls its argument when
  // done.
  void holder_op(const std::string& name, std::function<void(Completion next)> op);
  void run_holder_op(const std::string& name);

  ShardContext& shard_;
  NamedSubscriptions& named_;
  OwnedQueues& queues_;
  std::unordered_map<std::string, std::deque<std::function<void(Completion)>>> ops_;  // by subscription name
};

}  // namespace carrier::core
