#include "relay/mailbox.hpp"

namespace carrier::relay {

std::size_t Mailbox::hand_out(std::size_t max, std::int64_t now_ms, std::uint64_t batch, std::string& out) {
  std::size_t n = 0;
  while (n < max && !pending_.empty()) {
    out.append(pending_.front().bytes);
    in_flight_.push_back(InFlight{std::move(pending_.front()), now_ms, batch});
    pending_.pop_front();
    ++n;
  }
  return n;
}

std::vector<Mailbox::Item> Mailbox::acknowledge(std::optional<std::uint64_t> received) {
  std::vector<Item> acked;
  std::vector<Item> lost;
  for (auto& f : in_flight_) {
    (!received || f.batch <= *received ? acked : lost).push_back(std::move(f.item));
  }
  in_flight_.clear();
  for (auto it = lost.rbegin(); it != lost.rend(); ++it) pending_.push_front(std::move(*it));
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
  std::vector<Item> all;
  for (auto& f : in_flight_) all.push_back(std::move(f.item));
  for (auto& i : pending_) all.push_back(std::move(i));
  in_flight_.clear();
  pending_.clear();
  return all;
}

}  // namespace carrier::relay
