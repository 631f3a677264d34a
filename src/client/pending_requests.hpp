#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.hpp"
#include "net/asio.hpp"
#include "stomp/codec/frame.hpp"

namespace carrier::client {

// Requests waiting for their answer (a RECEIPT for a receipt id, CONNECTED for the CONNECT),
// correlated by id, each with a deadline. Every completion runs exactly once: on the answer,
// on its deadline, or when the connection fails (fail_all).
//
// Timeouts use one steady_timer armed for the earliest deadline: no polling, no busy wait
// (seed 003's PendingRequest spun on a flag). The timer is re-armed only when a request with an
// earlier deadline arrives or when it fires; a request answered early leaves the timer armed
// for its stale deadline, and that wake-up just finds nothing due.
//
// Runs on: the owning client's I/O thread — every call, and every completion is invoked there.
// Not thread-safe; other threads post to that thread. A completion may call back into this
// object (add, complete) because it is invoked after its entry has been removed.
class PendingRequests {
 public:
  using Clock = std::chrono::steady_clock;
  using Completion = std::function<void(Result<stomp::codec::Frame>)>;

  explicit PendingRequests(net::asio::any_io_executor executor);
  ~PendingRequests();
  PendingRequests(const PendingRequests&) = delete;
  PendingRequests& operator=(const PendingRequests&) = delete;

  // Registers `id`, to be answered within `timeout`. Errc::already_exists (and `done` is not
  // kept) when `id` is already waiting.
  Status add(std::string id, Clock::duration timeout, Completion done);

  // Completes `id` with `result`. False when no such request waits: it already timed out, or
  // the peer answered an id never asked (the caller decides whether that is a protocol error).
  bool complete(std::string_view id, Result<stomp::codec::Frame> result);

  // Fails every waiting request with `error` (connection lost, ERROR frame, shutdown).
  void fail_all(const Error& error);

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

 private:
  using Deadlines = std::multimap<Clock::time_point, std::string>;
  struct Entry {
    Completion done;
    Deadlines::iterator deadline;
  };

  void arm_timer();
  void disarm_timer();
  void on_timer();

  std::unordered_map<std::string, Entry> entries_;
  Deadlines deadlines_;  // earliest first
  net::asio::steady_timer timer_;
  Clock::time_point armed_for_ = Clock::time_point::max();
  // A timer handler already queued with success can outlive this object; it holds a weak_ptr
  // to this token and returns when the object is gone.
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
};

}  // namespace carrier::client
