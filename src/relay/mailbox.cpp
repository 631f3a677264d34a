#include "relay/mailbox.hpp"

namespace carrier::relay {

std::size_t Mailbox::hand_out(std::size_t max, std::int64_t now_ms, std::string& out) {
  std::size_t n = 0;
  while (n < max && !pending_.empty()) {
    out.append(pending_.front().bytes);
    in_flight_.push_back(InFlight{std::move(pending_.front()), now_ms});
    pending_.pop_front();
    ++n;
  }
  return n;
}

std::vector<Mailbox::Item> Mailbox::acknowledge() {
  std::vector<Item> acked;
  for (auto& f : in_flight_) {
    if (f.item.from_pipe) acked.push_back(std::move(f.item));
  }
  in_flight_.clear();
  return acked;
}

std::size_t Mailbox::redeliver_older_than(std::int64_t before_ms) {
  std::size_t n = 0;
  while (n < in_flight_.size() && in_flight_[n].handed_ms < before_ms) ++n;
  // Back in front of the waiting ones, in the order they were first handed out.
  for (std::size_t i = n; i > 0; --i) pending_.push_front(std::move(in_flight_[i - 1].item));
  in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

std::vector<Mailbox::Item> Mailbox::clear() {
  std::vector<Item> pipe;
  for (auto& f : in_flight_) {
    if (f.item.from_pipe) pipe.push_back(std::move(f.item));
  }
  for (auto& i : pending_) {
    if (i.from_pipe) pipe.push_back(std::move(i));
  }
  in_flight_.clear();
  pending_.clear();
  return pipe;
}

}  // namespace carrier::relay
