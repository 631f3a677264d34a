#include "federation/demand_table.hpp"

#include <charconv>

namespace carrier::federation {

bool DemandTable::add_local(const std::string& key) { return ++local_[key] == 1; }

bool DemandTable::remove_local(const std::string& key) {
  auto it = local_.find(key);
  if (it == local_.end()) return false;
  if (--it->second != 0) return false;
  local_.erase(it);
  return true;
}

std::size_t DemandTable::local_count(const std::string& key) const {
  auto it = local_.find(key);
  return it == local_.end() ? 0 : it->second;
}

const Demand& DemandTable::peer(std::uint64_t link) const {
  static const Demand kNone;
  auto it = peers_.find(link);
  return it == peers_.end() ? kNone : it->second;
}

Demand DemandTable::advertised_to(std::uint64_t link) const {
  Demand out;
  for (const auto& [key, count] : local_) out[key] = 0;
  for (const auto& [other, demand] : peers_) {
    if (other == link) continue;
    for (const auto& [key, distance] : demand) {
      const std::int32_t further = distance + 1;
      if (further >= max_distance_) continue;
      auto [it, added] = out.emplace(key, further);
      if (!added && further < it->second) it->second = further;
    }
  }
  return out;
}

codec::NodeProperty to_property(const Demand& demand) {
  codec::NodePropertyEntry selectors{"selectors", {}};
  codec::NodePropertyEntry distances{"distances", {}};
  for (const auto& [key, distance] : demand) {
    selectors.values.push_back(key);
    distances.values.push_back(std::to_string(distance));
  }
  return codec::NodeProperty{{std::move(selectors), std::move(distances)}};
}

Result<Demand> from_property(const codec::NodeProperty& property) {
  Demand out;
  const auto* selectors = property.find("selectors");
  if (selectors == nullptr) return out;
  const auto* distances = property.find("distances");
  if (distances == nullptr || distances->size() != selectors->size()) {
    return unexpected(Errc::protocol_error, "'distances' must name one distance per selector");
  }
  for (std::size_t i = 0; i < selectors->size(); ++i) {
    const auto& text = (*distances)[i];
    std::int32_t d = -1;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec != std::errc() || end != text.data() + text.size() || d < 0) {
      return unexpected(Errc::protocol_error, "a distance must be a decimal from 0 to 2147483647");
    }
    auto [it, added] = out.emplace((*selectors)[i], d);
    if (!added && d < it->second) it->second = d;
  }
  return out;
}

}  // namespace carrier::federation
