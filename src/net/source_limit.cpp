#include "net/source_limit.hpp"

#include <algorithm>

namespace carrier::net {

Admission::Admission(Admission&& other) noexcept
    : limiter_(other.limiter_), source_(std::move(other.source_)), refusal_(other.refusal_) {
  other.limiter_ = nullptr;
}

Admission& Admission::operator=(Admission&& other) noexcept {
  if (this != &other) {
    release();
    limiter_ = other.limiter_;
    source_ = std::move(other.source_);
    refusal_ = other.refusal_;
    other.limiter_ = nullptr;
  }
  return *this;
}

void Admission::release() {
  if (limiter_ == nullptr) return;
  limiter_->release(source_);
  limiter_ = nullptr;
}

SourceLimiter::SourceLimiter(SourceLimits limits) : limits_(limits) {}

void SourceLimiter::refill(Entry& e, Clock::time_point now) const {
  if (now <= e.updated) return;
  const double seconds = std::chrono::duration<double>(now - e.updated).count();
  e.tokens = std::min<double>(limits_.connection_burst_per_source,
                              e.tokens + seconds * double(limits_.connection_rate_per_source));
  e.updated = now;
}

void SourceLimiter::make_room() {
  // The least recently seen address without an open connection goes. Looking at a few from
  // the back is enough: an address with connections counts against max_connections anyway.
  auto it = entries_.end();
  for (int looked = 0; looked < 16 && it != entries_.begin(); ++looked) {
    --it;
    if (it->connections == 0) {
      by_source_.erase(it->source);
      entries_.erase(it);
      return;
    }
  }
}

Admission SourceLimiter::admit(std::string_view source, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (connections_ >= limits_.max_connections) return Admission::refused(Refusal::connections);
  if (source.empty()) {
    ++connections_;
    Admission a;
    a.limiter_ = this;
    return a;
  }
  auto found = by_source_.find(source);
  List::iterator it;
  if (found != by_source_.end()) {
    it = found->second;
    entries_.splice(entries_.begin(), entries_, it);
    refill(*it, now);
  } else {
    if (entries_.size() >= std::max<std::size_t>(1, limits_.max_sources)) make_room();
    entries_.push_front(Entry{std::string(source), 0, double(limits_.connection_burst_per_source), now});
    it = entries_.begin();
    by_source_.emplace(it->source, it);
  }
  if (it->connections >= limits_.max_connections_per_source) return Admission::refused(Refusal::connections_per_source);
  if (limits_.connection_rate_per_source != 0) {
    if (it->tokens < 1) return Admission::refused(Refusal::connection_rate);
    it->tokens -= 1;
  }
  ++it->connections;
  ++connections_;
  Admission a;
  a.limiter_ = this;
  a.source_ = it->source;
  return a;
}

void SourceLimiter::release(const std::string& source) {
  std::lock_guard lock(mutex_);
  --connections_;
  if (source.empty()) return;  // counted in the total only
  auto found = by_source_.find(source);
  if (found == by_source_.end()) return;  // never: an address with connections is not dropped
  auto it = found->second;
  if (it->connections > 0) --it->connections;
  // Forgotten once idle with a full bucket: remembering it would change nothing.
  if (it->connections == 0 && (limits_.connection_rate_per_source == 0 ||
                               it->tokens >= limits_.connection_burst_per_source)) {
    by_source_.erase(it->source);
    entries_.erase(it);
  }
}

std::size_t SourceLimiter::connections() const {
  std::lock_guard lock(mutex_);
  return connections_;
}

std::size_t SourceLimiter::sources() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace carrier::net
