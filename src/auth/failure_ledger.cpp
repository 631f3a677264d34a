#include "auth/failure_ledger.hpp"

#include <algorithm>

namespace carrier::auth {

FailureLedger::FailureLedger(FailureLimits limits)
    : limits_(limits),
      per_source_per_ms_(double(std::max<std::uint32_t>(1, limits.per_source)) /
                         double(std::max<std::int64_t>(1, limits.window.count()))),
      total_per_ms_(double(std::max<std::uint32_t>(1, limits.total)) /
                    double(std::max<std::int64_t>(1, limits.window.count()))) {
  limits_.max_sources = std::max<std::size_t>(1, limits_.max_sources);
}

void FailureLedger::drain(Entry& e, TimePoint now) const {
  if (now > e.updated) {
    const auto ms = std::chrono::duration<double, std::milli>(now - e.updated).count();
    e.failures = std::max(0.0, e.failures - ms * per_source_per_ms_);
    e.updated = now;
  }
}

double FailureLedger::total_failures(TimePoint now) {
  if (now > total_updated_) {
    const auto ms = std::chrono::duration<double, std::milli>(now - total_updated_).count();
    total_ = std::max(0.0, total_ - ms * total_per_ms_);
    total_updated_ = now;
  }
  return total_;
}

FailureLedger::Entry& FailureLedger::touch(std::string_view source, TimePoint now) {
  if (auto it = by_source_.find(source); it != by_source_.end()) {
    entries_.splice(entries_.begin(), entries_, it->second);
    drain(*it->second, now);
    return *it->second;
  }
  if (entries_.size() >= limits_.max_sources) {
    by_source_.erase(entries_.back().source);
    entries_.pop_back();
  }
  entries_.push_front(Entry{std::string(source), 0, now, 0});
  by_source_.emplace(entries_.front().source, entries_.begin());
  return entries_.front();
}

void FailureLedger::forget_if_idle(List::iterator it) {
  if (it->failures > 0 || it->checking > 0) return;
  by_source_.erase(it->source);
  entries_.erase(it);
}

Standing FailureLedger::standing(std::string_view source, TimePoint now) {
  const double total = total_failures(now);
  auto found = by_source_.find(source);
  if (found == by_source_.end()) return Standing::clean;
  auto it = found->second;
  drain(*it, now);
  Standing s = Standing::clean;
  if (it->failures > 0) {
    // Barred while a whole budget's worth is still undrained; suspect until all of it is.
    if (it->failures + 1 > limits_.per_source + 1e-9 || total + 1 > limits_.total + 1e-9) {
      s = Standing::barred;
    } else {
      s = Standing::suspect;
    }
  } else if (it->checking > 0) {
    s = Standing::suspect;
  }
  forget_if_idle(it);
  return s;
}

void FailureLedger::begin_check(std::string_view source, TimePoint now) { ++touch(source, now).checking; }

void FailureLedger::end_check(std::string_view source, TimePoint now) {
  auto found = by_source_.find(source);
  if (found == by_source_.end()) return;  // forgotten meanwhile (the table was full)
  auto it = found->second;
  drain(*it, now);
  if (it->checking > 0) --it->checking;
  forget_if_idle(it);
}

std::chrono::milliseconds FailureLedger::failure_delay(std::string_view source, TimePoint now,
                                                       std::chrono::milliseconds base, std::chrono::milliseconds max) {
  auto found = by_source_.find(source);
  if (found == by_source_.end() || base.count() <= 0) return std::min(base, max);
  drain(*found->second, now);
  // Failures on record, rounded up, the one just recorded included; 2^30 is past any max.
  const auto failures = std::min<double>(30, std::max<double>(1, found->second->failures + 0.999));
  const auto doublings = static_cast<int>(failures) - 1;
  const double ms = double(base.count()) * double(std::int64_t(1) << doublings);
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min<double>(ms, double(max.count()))));
}

void FailureLedger::record_failure(std::string_view source, TimePoint now) {
  total_failures(now);
  total_ += 1;
  touch(source, now).failures += 1;
}

}  // namespace carrier::auth
