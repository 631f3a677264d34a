#include "core/policy_table.hpp"

#include <string>
#include <string_view>

#include "core/destination_tree.hpp"
#include "model/queue_key.hpp"

namespace carrier::core {

using model::Destination;
using model::DestinationKind;

PolicyTable::PolicyTable(std::vector<DestinationPolicy> policies) : policies_(std::move(policies)) {
  for (std::size_t i = 0; i < policies_.size(); ++i) {
    std::string_view match = policies_[i].match;
    Destination d{DestinationKind::queue, std::string(match)};
    bool any = true;
    // "queue:PATTERN" / "topic:PATTERN", spelt as QueueKey spells those kinds.
    const auto queue = model::QueueKey::prefix(model::QueueKind::queue);
    const auto topic = model::QueueKey::prefix(model::QueueKind::topic);
    if (match.starts_with(queue)) {
      d.name = std::string(match.substr(queue.size()));
      any = false;
    } else if (match.starts_with(topic)) {
      d = Destination{DestinationKind::topic, std::string(match.substr(topic.size()))};
      any = false;
    }
    patterns_.emplace_back(std::move(d), i);
    any_kind_.push_back(any);
  }
}

const DestinationPolicy& PolicyTable::policy_for(const Destination& d) const {
  for (std::size_t i = 0; i < patterns_.size(); ++i) {
    const auto& [pattern, index] = patterns_[i];
    const bool kind_ok = any_kind_[i] || pattern.kind == d.kind ||
                         (pattern.kind == DestinationKind::queue && d.kind == DestinationKind::temp_queue);
    if (kind_ok && DestinationTree::filter_matches(pattern.name, d.name)) return policies_[index];
  }
  return default_policy_;
}

}  // namespace carrier::core
