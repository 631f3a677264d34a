#include "admin/store_monitor.hpp"

#include <gtest/gtest.h>

namespace carrier::admin {
namespace {

// A backend whose batches finish when the test says, with the status it says.
class ManualStore : public store::Store {
 public:
  Status open() override { return ok(); }
  Status recover(const std::function<void(store::RecoveredMessage)>&) override { return ok(); }
  void start() override {}
  void append(store::Batch, store::DurableCallback cb) override { pending.push_back(std::move(cb)); }
  void close() override {}
  bool can_scan() const override { return true; }
  void scan(std::string queue, std::uint8_t priority, store::Location from, std::size_t max,
            store::ScanCallback done) override {
    scanned = queue + "/" + std::to_string(priority) + "/" + std::to_string(from.file) + "/" + std::to_string(max);
    store::ScanResult r;
    r.exhausted = true;
    done(std::move(r));
  }
  std::vector<store::DurableCallback> pending;
  std::string scanned;
};

TEST(StoreMonitor, PassesScansToTheStoreItWraps) {
  auto inner = std::make_unique<ManualStore>();
  auto* manual = inner.get();
  StoreMonitor monitor(std::move(inner));
  EXPECT_TRUE(monitor.can_scan());
  bool answered = false;
  monitor.scan("queue:q", 3, store::Location{7, 0, 0}, 128, [&](Result<store::ScanResult> r) {
    answered = r && r->exhausted;
  });
  EXPECT_TRUE(answered);
  EXPECT_EQ(manual->scanned, "queue:q/3/7/128");
}

TEST(StoreMonitor, CountsBatchesAndFailuresAndPassesStatusOn) {
  auto inner = std::make_unique<ManualStore>();
  auto* manual = inner.get();
  StoreMonitor monitor(std::move(inner));
  std::vector<bool> outcomes;
  monitor.append(store::Batch(2), [&](Status st) { outcomes.push_back(static_cast<bool>(st)); });
  monitor.append(store::Batch(1), [&](Status st) { outcomes.push_back(static_cast<bool>(st)); });
  EXPECT_EQ(monitor.health().batches, 0u);
  EXPECT_TRUE(monitor.health().last_ok);

  manual->pending[0](ok());
  manual->pending[1](unexpected(Errc::io_error, "disk full"));
  const auto h = monitor.health();
  EXPECT_EQ(outcomes, (std::vector<bool>{true, false}));
  EXPECT_EQ(h.batches, 2u);
  EXPECT_EQ(h.records, 3u);
  EXPECT_EQ(h.failures, 1u);
  EXPECT_FALSE(h.last_ok);
  EXPECT_EQ(h.commit_latency.count(), 2u);

  monitor.close();
  EXPECT_TRUE(monitor.health().closed);
}

}  // namespace
}  // namespace carrier::admin
