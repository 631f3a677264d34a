#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "model/message.hpp"
#include "core/options.hpp"

namespace carrier::core {

// The configured destination policies, matched by kind and filter: the first whose `match`
// covers a destination applies, else the defaults. Built once; read on every shard's own copy.
// Runs on: its shard.
class PolicyTable {
 public:
  explicit PolicyTable(std::vector<DestinationPolicy> policies);

  const DestinationPolicy& policy_for(const model::Destination& d) const;

 private:
  std::vector<DestinationPolicy> policies_;
  DestinationPolicy default_policy_;
  std::vector<std::pair<model::Destination, std::size_t>> patterns_;  // kind + filter -> policies_ index
  std::vector<bool> any_kind_;
};

}  // namespace carrier::core
