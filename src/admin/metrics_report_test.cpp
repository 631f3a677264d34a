#include "admin/metrics_report.hpp"

#include <gtest/gtest.h>

namespace carrier::admin {
namespace {

struct Fixture {
  BrokerInfo info{"1.2.3", "memory", 2};
  ShardSnapshot broker;
  StoreHealth store;

  std::string render(const MetricsOptions& options) {
    return render_metrics(MetricsInput{info, 5, broker, store, 100, 1000, {}, 0, 0}, options);
  }
};

bool has(const std::string& text, std::string_view line) { return text.find(line) != std::string::npos; }

TEST(MetricsReport, TotalsConnectionsAndMemory) {
  Fixture f;
  f.broker.counters.published = 7;
  f.broker.counters.delivered = 5;
  f.broker.connections_by_protocol["stomp"] = 2;
  const auto text = f.render({});
  EXPECT_TRUE(has(text, "carrier_build_info{version=\"1.2.3\",store=\"memory\"} 1\n"));
  EXPECT_TRUE(has(text, "carrier_messages_published_total 7\n"));
  EXPECT_TRUE(has(text, "carrier_messages_delivered_total 5\n"));
  EXPECT_TRUE(has(text, "carrier_connections{protocol=\"stomp\"} 2\n"));
  EXPECT_TRUE(has(text, "carrier_connections{protocol=\"mqtt\"} 0\n"));
  EXPECT_TRUE(has(text, "carrier_memory_used_bytes 100\n"));
  EXPECT_TRUE(has(text, "carrier_memory_limit_bytes 1000\n"));
  EXPECT_TRUE(has(text, "carrier_store_commit_duration_seconds_count 0\n"));
  EXPECT_FALSE(has(text, "carrier_queue_depth"));  // no destinations configured
}

TEST(MetricsReport, TheDiskAlarmOnlyWhenADiskIsWatched) {
  Fixture f;
  EXPECT_FALSE(has(f.render({}), "carrier_disk_"));
  core::DiskAlarm alarm(1000);
  (void)alarm.update(10);
  MetricsInput in{f.info, 5, f.broker, f.store, 100, 1000, {}, 0, 0, &alarm};
  const auto text = render_metrics(in, {});
  EXPECT_TRUE(has(text, "carrier_disk_free_bytes 10\n"));
  EXPECT_TRUE(has(text, "carrier_disk_free_limit_bytes 1000\n"));
  EXPECT_TRUE(has(text, "carrier_disk_alarm 1\n"));
  EXPECT_TRUE(has(text, "carrier_disk_alarms_total 1\n"));
}

TEST(MetricsReport, RefusalsByReasonAndTheDestinationBudget) {
  Fixture f;
  MetricsInput in{f.info, 5, f.broker, f.store, 100, 1000, {}, 0, 0};
  in.refusals[static_cast<std::size_t>(net::Refusal::connection_rate)] = 3;
  in.destinations = 12;
  in.max_destinations = 100;
  const auto text = render_metrics(in, {});
  EXPECT_TRUE(has(text, "# TYPE carrier_refusals_total counter\n"));
  EXPECT_TRUE(has(text, "carrier_refusals_total{reason=\"connection_rate\"} 3\n"));
  EXPECT_TRUE(has(text, "carrier_refusals_total{reason=\"connections_per_source\"} 0\n"));  // every reason, zeros too
  EXPECT_TRUE(has(text, "carrier_refusals_total{reason=\"destinations\"} 0\n"));
  EXPECT_TRUE(has(text, "carrier_destinations 12\n"));
  EXPECT_TRUE(has(text, "carrier_destinations_limit 100\n"));
}

TEST(MetricsReport, DestinationSeriesFollowPatternsAndTheCap) {
  Fixture f;
  f.broker.queues = {QueueRow{"queue:orders.eu", 4, 40, 1, 2, 9},
                     QueueRow{"queue:orders.us", 1},
                     QueueRow{"queue:audit", 6},
                     QueueRow{"temp-queue:orders.tmp", 1},
                     QueueRow{"queue:$mqtt-sessions", 3},
                     QueueRow{"subscription:stomp:app:s1", 8, 0, 0, 1, 0, true}};
  MetricsOptions options{{"orders.>", "stomp:app:s1"}, 10};
  auto text = f.render(options);
  EXPECT_TRUE(has(text, "carrier_queue_depth{queue=\"orders.eu\"} 4\n"));
  EXPECT_TRUE(has(text, "carrier_queue_bytes{queue=\"orders.eu\"} 40\n"));
  EXPECT_TRUE(has(text, "carrier_queue_unacked{queue=\"orders.eu\"} 1\n"));
  EXPECT_TRUE(has(text, "carrier_queue_consumers{queue=\"orders.eu\"} 2\n"));
  EXPECT_TRUE(has(text, "carrier_queue_enqueued_total{queue=\"orders.eu\"} 9\n"));
  EXPECT_TRUE(has(text, "carrier_queue_depth{queue=\"orders.us\"} 1\n"));
  EXPECT_FALSE(has(text, "queue=\"audit\""));
  EXPECT_FALSE(has(text, "orders.tmp"));
  EXPECT_FALSE(has(text, "mqtt-sessions"));
  EXPECT_TRUE(has(text, "carrier_subscription_depth{subscription=\"stomp:app:s1\"} 8\n"));
  EXPECT_TRUE(has(text, "carrier_destination_series_dropped 0\n"));

  options.max_destination_series = 1;  // queues first, by name
  text = f.render(options);
  EXPECT_TRUE(has(text, "carrier_queue_depth{queue=\"orders.eu\"} 4\n"));
  EXPECT_FALSE(has(text, "orders.us"));
  EXPECT_FALSE(has(text, "carrier_subscription_depth"));
  EXPECT_TRUE(has(text, "carrier_destination_series_dropped 2\n"));
}

TEST(MetricsReport, EachFamilyIsDeclaredOnce) {
  Fixture f;
  f.broker.queues = {QueueRow{"queue:a"}, QueueRow{"queue:b"}};
  const auto text = f.render(MetricsOptions{{">"}, 100});
  std::size_t at = 0;
  std::size_t n = 0;
  while ((at = text.find("# TYPE carrier_queue_depth ", at)) != std::string::npos) {
    ++n;
    ++at;
  }
  EXPECT_EQ(n, 1u);
}

}  // namespace
}  // namespace carrier::admin
