#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>

#include "base/result.hpp"
#include "federation/codec/remote_node.hpp"

namespace carrier::federation {

// Demand: destination key ("queue:orders", "topic:prices.>") -> distance in hops to the
// nearest consumer (0: on the node itself).
using Demand = std::map<std::string, std::int32_t>;

// Which destinations have consumers where: this node's own consumers (counted), and what each
// link's far node advertised. What a node advertises to a link is its own demand at distance 0
// and what the other links advertised, one hop further, while that stays below `max_distance`
// (the TTL: no message could get further), never the link's own advertisement back to it
// (split horizon), so demand spreads through a line, a ring or a mesh and fades when its
// consumers go.
// Runs on: shard 0 (federation::Node).
class DemandTable {
 public:
  explicit DemandTable(std::int32_t max_distance) : max_distance_(max_distance) {}

  // A local consumer came or went; true when the destination gained its first or lost its last.
  bool add_local(const std::string& key);
  bool remove_local(const std::string& key);
  std::size_t local_count(const std::string& key) const;

  // A link's far node advertised `demand` (replacing what it said before); forget it when the
  // link goes.
  void set_peer(std::uint64_t link, Demand demand) { peers_[link] = std::move(demand); }
  void remove_peer(std::uint64_t link) { peers_.erase(link); }
  const Demand& peer(std::uint64_t link) const;

  Demand advertised_to(std::uint64_t link) const;

 private:
  std::int32_t max_distance_;
  std::unordered_map<std::string, std::size_t> local_;
  std::unordered_map<std::uint64_t, Demand> peers_;
};

// Demand in a NodeProperty: key `selectors` (the destination keys) and `distances` (decimal,
// one per selector, same order).
codec::NodeProperty to_property(const Demand& demand);
// Refused: a `distances` count that differs from `selectors`', a distance that is not a
// decimal from 0 to 2^31-1. Missing keys are no demand.
Result<Demand> from_property(const codec::NodeProperty& property);

}  // namespace carrier::federation
