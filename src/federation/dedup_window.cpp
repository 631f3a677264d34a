#include "federation/dedup_window.hpp"

namespace carrier::federation {

bool DedupWindow::insert(const model::MessageId& id, HopInfo info) {
  if (seen_.contains(id)) {
    ++duplicates_;
    return false;
  }
  seen_.emplace(id, std::move(info));
  order_.push_back(id);
  // Erased ids leave stale entries in order_; they are dropped here as they reach the front.
  while (seen_.size() > capacity_ || order_.size() > 2 * capacity_) {
    seen_.erase(order_.front());
    order_.pop_front();
  }
  return true;
}

const HopInfo* DedupWindow::find(const model::MessageId& id) const {
  auto it = seen_.find(id);
  return it == seen_.end() ? nullptr : &it->second;
}

}  // namespace carrier::federation
