#include "federation/dedup_window.hpp"

namespace carrier::federation {

HopInfo* DedupWindow::insert(const model::MessageId& id, HopInfo info, std::vector<model::MessageId>* forgotten) {
  const std::uint64_t sequence = next_sequence_;
  auto [added, fresh] = seen_.try_emplace(id, Entry{std::move(info), sequence});
  if (!fresh) return nullptr;
  ++next_sequence_;
  order_.emplace_back(id, sequence);
  while (seen_.size() > capacity_ || order_.size() > 2 * capacity_) {
    const auto [oldest, at] = order_.front();
    order_.pop_front();
    auto it = seen_.find(oldest);
    if (it == seen_.end() || it->second.sequence != at) continue;  // erased since
    if (forgotten != nullptr && !it->second.info.record.is_nil()) forgotten->push_back(it->second.info.record);
    seen_.erase(it);
  }
  // Never the entry just added: it is the newest, and the window holds at least one.
  return &added->second.info;
}

const HopInfo* DedupWindow::find(const model::MessageId& id) const {
  auto it = seen_.find(id);
  return it == seen_.end() ? nullptr : &it->second.info;
}

}  // namespace carrier::federation
