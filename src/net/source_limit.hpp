#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "net/options.hpp"
#include "net/refusals.hpp"

namespace carrier::net {

class SourceLimiter;

// One accepted connection's place in the per-source counts: held for the connection's life
// (released when it is destroyed), or a refusal the session must answer in its protocol's words.
// Runs on: the connection's shard (release takes the limiter's lock).
class Admission {
 public:
  Admission() = default;  // not counted, not refused (a connection no limiter looked at)
  static Admission refused(Refusal why) {
    Admission a;
    a.refusal_ = why;
    return a;
  }
  Admission(Admission&& other) noexcept;
  Admission& operator=(Admission&& other) noexcept;
  Admission(const Admission&) = delete;
  Admission& operator=(const Admission&) = delete;
  ~Admission() { release(); }

  const std::optional<Refusal>& refusal() const { return refusal_; }
  bool counted() const { return limiter_ != nullptr; }
  void release();

 private:
  friend class SourceLimiter;
  SourceLimiter* limiter_ = nullptr;
  std::string source_;
  std::optional<Refusal> refusal_;
};

// Open connections in total and per source address, and each address's connection rate (a
// token bucket: `connection_burst_per_source` at once, refilled at `connection_rate_per_source`
// a second). The table of addresses is bounded: an address with no open connection whose
// bucket is full is forgotten, and past `max_sources` the least recently seen address without
// an open connection is dropped, so the table holds at most `max_sources` addresses plus those
// with an open connection (at most `max_connections`): 100,000 addresses cannot grow it.
// Pure bookkeeping, `now` passed in; one mutex, held for a map look-up (docs/threading.md).
// Runs on: admit() on the accepting thread (shard 0); releases on any shard.
class SourceLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SourceLimiter(SourceLimits limits);
  SourceLimiter(const SourceLimiter&) = delete;
  SourceLimiter& operator=(const SourceLimiter&) = delete;

  // Counts a new connection from `source` (an IP address without port), or refuses it: the
  // total first, then the address's open connections, then its rate. A refused attempt spends
  // no token, so a client that retries at the rate still gets in; one that floods stays out.
  // An empty `source` counts in the total only (an exempt loopback client).
  Admission admit(std::string_view source, Clock::time_point now);

  std::size_t connections() const;
  std::size_t sources() const;
  const SourceLimits& limits() const { return limits_; }

 private:
  friend class Admission;
  struct Entry {
    std::string source;
    std::size_t connections = 0;
    double tokens = 0;  // as of `updated`
    Clock::time_point updated;
  };
  using List = std::list<Entry>;

  void release(const std::string& source);
  void refill(Entry& e, Clock::time_point now) const;
  void make_room();

  const SourceLimits limits_;
  mutable std::mutex mutex_;
  std::size_t connections_ = 0;
  List entries_;  // most recently seen first
  std::unordered_map<std::string_view, List::iterator> by_source_;  // keys view into entries_
};

}  // namespace carrier::net
