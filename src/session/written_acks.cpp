#include "session/written_acks.hpp"

namespace carrier::session {

void WrittenAcks::stage(core::ConsumerId consumer, std::uint64_t tag) {
  if (last_tags_ == nullptr || consumer != last_consumer_) {
    last_consumer_ = consumer;
    last_tags_ = &staged_[consumer];
  }
  last_tags_->push_back(tag);
}

void WrittenAcks::on_write_started() {
  last_tags_ = nullptr;
  if (staged_.empty()) return;
  if (writing_.empty()) {
    std::swap(staged_, writing_);
    return;
  }
  for (auto& [consumer, tags] : staged_) {
    auto& w = writing_[consumer];
    w.insert(w.end(), tags.begin(), tags.end());
  }
  staged_.clear();
}

void WrittenAcks::clear() {
  last_tags_ = nullptr;
  staged_.clear();
  writing_.clear();
}

}  // namespace carrier::session
