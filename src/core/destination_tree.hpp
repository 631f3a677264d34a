#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/consumer.hpp"
#include "core/executor.hpp"
#include "selector/fwd.hpp"

namespace carrier::core {

// A topic subscription as the matcher sees it. A private subscription is a consumer's own queue
// on its home shard; a named (durable or shared) one is the queue `queue_key` on shard `home`.
struct TopicSubscriber {
  ConsumerId id;
  model::ShardId home;
  std::string queue_key;  // named subscriptions only
  bool durable = false;
  std::shared_ptr<const selector::Selector> selector;
  std::uint64_t no_local_origin = 0;
};

// Topic filters in a trie over '.'-separated levels. `*` matches exactly one level; `>` (last
// level only) matches one or more remaining levels, as ActiveMQ spells them. A filter whose first
// level is a wildcard does not match names starting with `$` (MQTT's rule). A match walks the
// trie once per message: cost grows with the name's depth, not with the number of subscriptions.
// Runs on: one shard (each shard keeps its own replica).
class DestinationTree {
 public:
  DestinationTree();
  ~DestinationTree();

  void add(std::string_view filter, TopicSubscriber subscriber);
  bool remove(std::string_view filter, ConsumerId id);
  bool remove_named(std::string_view filter, std::string_view queue_key);
  // Appends every subscriber whose filter matches `name` (a concrete topic name).
  void match(std::string_view name, std::vector<TopicSubscriber>& out) const;
  std::size_t size() const { return size_; }

  static bool has_wildcards(std::string_view name);
  // Whether one filter matches one concrete name (no trie; for retained messages, policies).
  static bool filter_matches(std::string_view filter, std::string_view name);
  // A filter is valid when no level is empty and `>` appears only as the whole last level and
  // `*` only as a whole level.
  static bool is_valid_filter(std::string_view filter);

 private:
  struct Node;
  struct Subscribers;
  bool remove_if(std::string_view filter, std::uint64_t key, const std::function<bool(const TopicSubscriber&)>& pred);
  std::unique_ptr<Node> root_;
  std::size_t size_ = 0;
};

}  // namespace carrier::core
