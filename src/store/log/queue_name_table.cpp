#include "store/log/queue_name_table.hpp"

#include "base/assert.hpp"

namespace carrier::store::log {

std::uint32_t QueueNameTable::intern(std::string_view name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second;
  std::uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    CARRIER_ASSERT(slots_.size() < UINT32_MAX, "queue name table full");
    index = static_cast<std::uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  auto [it, inserted] = by_name_.emplace(std::string(name), index);
  slots_[index] = Slot{&it->first, 0};
  return index;
}

std::optional<std::uint32_t> QueueNameTable::find(std::string_view name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

void QueueNameTable::release(std::uint32_t index) {
  Slot& slot = slots_[index];
  CARRIER_ASSERT(slot.refs > 0, "queue name {} released more often than retained", index);
  if (--slot.refs != 0) return;
  by_name_.erase(by_name_.find(std::string_view(*slot.name)));
  slot = Slot{};
  free_.push_back(index);
}

void QueueNameTable::clear() {
  by_name_.clear();
  slots_.clear();
  free_.clear();
}

}  // namespace carrier::store::log
