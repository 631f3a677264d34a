#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>

namespace carrier::auth {

// How many failed logins are tolerated, per source address and broker-wide.
struct FailureLimits {
  std::uint32_t per_source = 10;  // failures a source may have before it is barred
  std::uint32_t total = 100;      // failures of all sources together before suspects are barred
  std::chrono::milliseconds window{60'000};  // in which each budget refills once
  std::size_t max_sources = 10'000;         // sources remembered; the least recently seen go first
};

// Where a login from one source address stands before its password is checked.
enum class Standing {
  clean,    // no recent failure and no other check of its own waiting in the first lane
  suspect,  // failed recently, or already has a check in the first lane: the second lane
  barred,   // over its failure budget (or a suspect while the broker-wide one is spent): refused
};

// Failed logins per source address, so that a client guessing passwords (or many clients of
// one address) spends its own budget of password checks and not everyone's. Each source's
// failures are a leaky bucket: one failure adds one, and `per_source` drain per `window`. The
// broker-wide bucket works the same with `total`. The table of sources is bounded: an entry
// whose bucket has drained and that has no check waiting is dropped, and past `max_sources`
// the least recently seen is forgotten, so 100,000 addresses cannot grow it without bound.
// Pure bookkeeping: no clock of its own (`now` is passed in) and no lock.
// Runs on: any thread, under its owner's lock (Authenticator's mutex).
class FailureLedger {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  explicit FailureLedger(FailureLimits limits);

  Standing standing(std::string_view source, TimePoint now);
  // A check of `source` entered the first lane; end_check() when it is done.
  void begin_check(std::string_view source, TimePoint now);
  void end_check(std::string_view source, TimePoint now);
  // A password check of `source` failed.
  void record_failure(std::string_view source, TimePoint now);

  // How long to wait before answering `source`'s failed login: `base` doubled for each failure
  // it has on record beyond the first (as drained to `now`: the delay decays as the budget
  // refills), at most `max`.
  std::chrono::milliseconds failure_delay(std::string_view source, TimePoint now, std::chrono::milliseconds base,
                                          std::chrono::milliseconds max);

  std::size_t sources() const { return entries_.size(); }

 private:
  struct Entry {
    std::string source;
    double failures = 0;  // as of `updated`
    TimePoint updated;
    std::uint32_t checking = 0;  // first-lane checks waiting or under way
  };
  using List = std::list<Entry>;

  // The source's entry, made if missing (evicting the least recently seen past max_sources),
  // drained to `now` and moved to the front.
  Entry& touch(std::string_view source, TimePoint now);
  void drain(Entry& e, TimePoint now) const;
  double total_failures(TimePoint now);
  void forget_if_idle(List::iterator it);

  FailureLimits limits_;
  double per_source_per_ms_;
  double total_per_ms_;
  List entries_;  // most recently seen first
  std::unordered_map<std::string_view, List::iterator> by_source_;  // keys view into entries_
  double total_ = 0;
  TimePoint total_updated_{};
};

}  // namespace carrier::auth
