#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/consumer.hpp"
#include "core/executor.hpp"

namespace carrier::core {

// A topic subscription as the matcher sees it: which consumer, on which shard.
struct TopicSubscriber {
  ConsumerId id;
  ShardId home;
};

// Topic filters in a trie over '.'-separated levels. `*` matches exactly one level; `>` (last
// level only) matches one or more remaining levels, as ActiveMQ spells them. A match walks the
// trie once per message: cost grows with the name's depth, not with the number of subscriptions.
// Runs on: one shard (each shard keeps its own replica).
class DestinationTree {
 public:
  DestinationTree();
  ~DestinationTree();

  void add(std::string_view filter, TopicSubscriber subscriber);
  bool remove(std::string_view filter, ConsumerId id);
  // Appends every subscriber whose filter matches `name` (a concrete topic name).
  void match(std::string_view name, std::vector<TopicSubscriber>& out) const;
  std::size_t size() const { return size_; }

  static bool has_wildcards(std::string_view name);
  // A filter is valid when no level is empty and `>` appears only as the whole last level and
  // `*` only as a whole level.
  static bool is_valid_filter(std::string_view filter);

 private:
  struct Node;
  std::unique_ptr<Node> root_;
  std::size_t size_ = 0;
};

}  // namespace carrier::core
