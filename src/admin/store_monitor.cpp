#include "admin/store_monitor.hpp"

#include <algorithm>

namespace carrier::admin {

void StoreMonitor::append(store::Batch batch, store::DurableCallback on_durable) {
  const auto started = std::chrono::steady_clock::now();
  const std::size_t records = batch.size();
  inner_->append(std::move(batch), [this, started, records, done = std::move(on_durable)](Status st) {
    finished(started, records, static_cast<bool>(st));
    if (done) done(std::move(st));
  });
}

void StoreMonitor::append_located(store::Batch batch, store::LocatedCallback on_durable) {
  const auto started = std::chrono::steady_clock::now();
  const std::size_t records = batch.size();
  inner_->append_located(std::move(batch), [this, started, records, done = std::move(on_durable)](
                                               Status st, std::vector<store::Location> where) {
    finished(started, records, static_cast<bool>(st));
    if (done) done(std::move(st), std::move(where));
  });
}

void StoreMonitor::close() {
  inner_->close();
  closed_.store(true, std::memory_order_relaxed);
}

void StoreMonitor::finished(std::chrono::steady_clock::time_point started, std::size_t records, bool ok) {
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count();
  const auto& bounds = core::LatencyHistogram::kBoundsMs;
  const auto at = std::lower_bound(bounds.begin(), bounds.end(), ms) - bounds.begin();
  buckets_[static_cast<std::size_t>(at)].fetch_add(1, std::memory_order_relaxed);
  sum_ms_.fetch_add(ms, std::memory_order_relaxed);
  batches_.fetch_add(1, std::memory_order_relaxed);
  records_.fetch_add(records, std::memory_order_relaxed);
  if (!ok) failures_.fetch_add(1, std::memory_order_relaxed);
  last_ok_.store(ok, std::memory_order_relaxed);
}

StoreHealth StoreMonitor::health() const {
  StoreHealth h;
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    h.commit_latency.counts[i] = buckets_[i].load(std::memory_order_relaxed);
  }
  h.commit_latency.sum_ms = sum_ms_.load(std::memory_order_relaxed);
  h.batches = batches_.load(std::memory_order_relaxed);
  h.records = records_.load(std::memory_order_relaxed);
  h.failures = failures_.load(std::memory_order_relaxed);
  h.last_ok = last_ok_.load(std::memory_order_relaxed);
  h.closed = closed_.load(std::memory_order_relaxed);
  return h;
}

}  // namespace carrier::admin
