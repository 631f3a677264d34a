#include "http/resume_window.hpp"

namespace carrier::http {

std::vector<std::uint64_t> ResumeWindow::written(const std::vector<std::uint64_t>& tags) {
  tags_.insert(tags_.end(), tags.begin(), tags.end());
  if (tags_.size() <= size_) return {};
  const auto excess = static_cast<std::ptrdiff_t>(tags_.size() - size_);
  std::vector<std::uint64_t> confirmed(tags_.begin(), tags_.begin() + excess);
  tags_.erase(tags_.begin(), tags_.begin() + excess);
  return confirmed;
}

std::optional<std::size_t> find_last_event(const std::vector<core::Delivery>& batch, std::string_view last_event_id) {
  const auto wanted = model::MessageId::parse(last_event_id);
  if (!wanted) return std::nullopt;
  for (std::size_t i = 0; i < batch.size(); ++i) {
    if (batch[i].message->id == *wanted) return i;
  }
  return std::nullopt;
}

}  // namespace carrier::http
