#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "core/shard_counters.hpp"
#include "store/store.hpp"

namespace carrier::admin {

// What the store did, as the admin API and /metrics show it.
struct StoreHealth {
  core::LatencyHistogram commit_latency;  // append() to durable, per batch
  std::uint64_t batches = 0;
  std::uint64_t records = 0;
  std::uint64_t failures = 0;  // batches whose callback reported an error
  bool last_ok = true;         // the last batch that finished was stored
  bool closed = false;
};

// A store::Store that times every batch from append() to its durable callback and counts
// failures, around the backend serve made (the backends need not know). The cost on the message
// path is one clock read and one wrapped callback per batch, not per message.
// Runs on: append() from any shard, callbacks on the store's writer thread; health() from any
// thread (atomics only).
class StoreMonitor final : public store::Store {
 public:
  explicit StoreMonitor(std::unique_ptr<store::Store> inner) : inner_(std::move(inner)) {}

  Status open() override { return inner_->open(); }
  Status recover(const std::function<void(store::RecoveredMessage)>& visit) override { return inner_->recover(visit); }
  Status recover(const store::RecoverOptions& options,
                 const std::function<void(store::RecoveredMessage)>& visit) override {
    return inner_->recover(options, visit);
  }
  void start() override { inner_->start(); }
  void append(store::Batch batch, store::DurableCallback on_durable) override;
  void append_located(store::Batch batch, store::LocatedCallback on_durable) override;
  // Reads are not timed: passed straight through.
  void read(std::string queue, std::vector<store::ReadItem> items, store::ReadCallback done) override {
    inner_->read(std::move(queue), std::move(items), std::move(done));
  }
  // Scans pass straight through (not counted: they read, like read()).
  bool can_scan() const override { return inner_->can_scan(); }
  void scan(std::string queue, std::uint8_t priority, store::Location from, std::size_t max,
            store::ScanCallback done) override {
    inner_->scan(std::move(queue), priority, from, max, std::move(done));
  }
  void close() override;

  StoreHealth health() const;

 private:
  void finished(std::chrono::steady_clock::time_point started, std::size_t records, bool ok);

  std::unique_ptr<store::Store> inner_;
  std::array<std::atomic<std::uint64_t>, core::LatencyHistogram::kBoundsMs.size() + 1> buckets_{};
  std::atomic<std::int64_t> sum_ms_{0};
  std::atomic<std::uint64_t> batches_{0};
  std::atomic<std::uint64_t> records_{0};
  std::atomic<std::uint64_t> failures_{0};
  std::atomic<bool> last_ok_{true};
  std::atomic<bool> closed_{false};
};

}  // namespace carrier::admin
