#include "client/pending_requests.hpp"

#include <utility>
#include <vector>

namespace carrier::client {

namespace asio = net::asio;

PendingRequests::PendingRequests(asio::any_io_executor executor) : timer_(std::move(executor)) {}

PendingRequests::~PendingRequests() {
  alive_.reset();
  timer_.cancel();
}

Status PendingRequests::add(std::string id, Clock::duration timeout, Completion done) {
  if (entries_.contains(id)) return unexpected(Errc::already_exists, "request id " + id);
  auto deadline = Clock::now() + timeout;
  auto it = deadlines_.emplace(deadline, id);
  entries_.emplace(std::move(id), Entry{std::move(done), it});
  if (deadline < armed_for_) arm_timer();
  return ok();
}

bool PendingRequests::complete(std::string_view id, Result<stomp::codec::Frame> result) {
  auto it = entries_.find(std::string(id));
  if (it == entries_.end()) return false;
  Completion done = std::move(it->second.done);
  deadlines_.erase(it->second.deadline);
  entries_.erase(it);
  // With requests left, the timer stays armed for a possibly stale deadline: re-arming would
  // cost a timer operation per answer, and the stale wake-up is harmless. With none left it is
  // cancelled, so an idle io_context has no pending work and can stop.
  if (entries_.empty()) disarm_timer();
  done(std::move(result));
  return true;
}

void PendingRequests::fail_all(const Error& error) {
  // Moved out first: a completion may add new requests, which must not be failed by this call.
  std::vector<Completion> failed;
  failed.reserve(entries_.size());
  for (auto& [id, entry] : entries_) failed.push_back(std::move(entry.done));
  entries_.clear();
  deadlines_.clear();
  disarm_timer();
  for (auto& done : failed) done(unexpected(error));
}

void PendingRequests::arm_timer() {
  if (deadlines_.empty()) {
    armed_for_ = Clock::time_point::max();
    return;
  }
  armed_for_ = deadlines_.begin()->first;
  // expires_at cancels a wait in progress; that handler sees operation_aborted and returns.
  timer_.expires_at(armed_for_);
  std::weak_ptr<int> alive = alive_;
  timer_.async_wait([this, alive](const boost::system::error_code& ec) {
    if (ec == asio::error::operation_aborted || alive.expired()) return;
    on_timer();
  });
}

void PendingRequests::disarm_timer() {
  if (armed_for_ == Clock::time_point::max()) return;
  armed_for_ = Clock::time_point::max();
  timer_.cancel();
}

void PendingRequests::on_timer() {
  auto now = Clock::now();
  std::vector<std::pair<std::string, Completion>> expired;
  while (!deadlines_.empty() && deadlines_.begin()->first <= now) {
    auto it = entries_.find(deadlines_.begin()->second);
    expired.emplace_back(it->first, std::move(it->second.done));
    entries_.erase(it);
    deadlines_.erase(deadlines_.begin());
  }
  arm_timer();
  for (auto& [id, done] : expired) done(unexpected(Errc::timed_out, "no answer to " + id));
}

}  // namespace carrier::client
