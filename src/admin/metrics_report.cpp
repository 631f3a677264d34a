#include "admin/metrics_report.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "admin/prometheus_text.hpp"
#include "core/destination_tree.hpp"
#include "model/queue_key.hpp"

namespace carrier::admin {

namespace {

// A queue row with a series: its kind's metric prefix and label, and its name.
struct Series {
  const QueueRow* row;
  bool subscription;
  std::string_view name;
};

std::vector<Series> series_rows(const ShardSnapshot& broker, const MetricsOptions& options, std::uint64_t& dropped) {
  std::vector<Series> rows;
  dropped = 0;
  if (options.destinations.empty()) return rows;
  for (const auto& q : broker.queues) {
    const auto key = model::QueueKey::parse(q.key);
    // Temporary queues come and go with connections: no series of their own.
    if (!key || (key->kind() != model::QueueKind::queue && key->kind() != model::QueueKind::subscription)) continue;
    const std::string_view name = std::string_view(q.key).substr(q.key.find(':') + 1);
    if (!name.empty() && name.front() == '$') continue;  // the broker's own reserved queues
    if (!wants_series(options, name)) continue;
    rows.push_back(Series{&q, key->kind() == model::QueueKind::subscription, name});
  }
  std::sort(rows.begin(), rows.end(), [](const Series& a, const Series& b) {
    return a.subscription != b.subscription ? !a.subscription : a.name < b.name;
  });
  if (rows.size() > options.max_destination_series) {
    dropped = rows.size() - options.max_destination_series;
    rows.resize(options.max_destination_series);
  }
  return rows;
}

void per_destination(PrometheusText& out, const std::vector<Series>& rows, bool subscriptions) {
  const std::string_view prefix = subscriptions ? "carrier_subscription_" : "carrier_queue_";
  const std::string_view label = subscriptions ? "subscription" : "queue";
  struct Column {
    std::string_view suffix;
    std::string_view type;
    std::string_view help;
    std::uint64_t (*value)(const QueueRow&);
  };
  static constexpr Column kColumns[] = {
      {"depth", "gauge", "Messages ready for delivery", [](const QueueRow& r) -> std::uint64_t { return r.depth; }},
      {"bytes", "gauge", "Bytes of the ready messages", [](const QueueRow& r) -> std::uint64_t { return r.bytes; }},
      {"unacked", "gauge", "Messages delivered and not yet acknowledged",
       [](const QueueRow& r) -> std::uint64_t { return r.unacked; }},
      {"consumers", "gauge", "Consumers attached", [](const QueueRow& r) -> std::uint64_t { return r.consumers; }},
      {"enqueued_total", "counter", "Messages put in since it was created",
       [](const QueueRow& r) -> std::uint64_t { return r.enqueued; }},
  };
  const bool any =
      std::any_of(rows.begin(), rows.end(), [&](const Series& s) { return s.subscription == subscriptions; });
  if (!any) return;
  for (const auto& c : kColumns) {
    const std::string name = std::string(prefix) + std::string(c.suffix);
    out.family(name, c.type, c.help);
    for (const auto& s : rows) {
      if (s.subscription == subscriptions) out.sample(name, {{label, s.name}}, c.value(*s.row));
    }
  }
}

}  // namespace

bool wants_series(const MetricsOptions& options, std::string_view name) {
  return std::any_of(options.destinations.begin(), options.destinations.end(), [name](const std::string& pattern) {
    return pattern == name || core::DestinationTree::filter_matches(pattern, name);
  });
}

std::string render_metrics(const MetricsInput& in, const MetricsOptions& options) {
  PrometheusText out;
  const auto& c = in.broker.counters;
  const auto& s = in.broker.stats;

  out.family("carrier_build_info", "gauge", "Always 1; the version is a label");
  out.sample("carrier_build_info", {{"version", in.info.version}, {"store", in.info.store_kind}}, std::uint64_t{1});
  out.scalar("carrier_uptime_seconds", "gauge", "Seconds since the broker started", in.uptime_seconds);
  out.scalar("carrier_shards", "gauge", "Shards (threads) serving messages", std::uint64_t{in.info.shards});

  out.scalar("carrier_messages_published_total", "counter", "Messages producers sent to the broker", c.published);
  out.scalar("carrier_messages_delivered_total", "counter", "Deliveries to consumers, redeliveries included",
             c.delivered);
  out.scalar("carrier_messages_redelivered_total", "counter", "Deliveries after the first of a message", c.redelivered);
  out.scalar("carrier_messages_dead_lettered_total", "counter",
             "Messages moved to a dead-letter queue, or dropped for want of one", c.dead_lettered);
  out.scalar("carrier_messages_paged_out_total", "counter",
             "Persistent messages that left memory past core.memory_budget_bytes (kept in the store)", c.paged_out);
  out.scalar("carrier_messages_spilled_total", "counter",
             "Non-persistent messages written to the store past core.memory_budget_bytes so that they could leave "
             "memory (dead after a restart)",
             c.spilled);
  out.scalar("carrier_messages_paged_in_total", "counter", "Paged messages read back from the store", c.paged_in);
  out.scalar("carrier_page_in_missing_total", "counter",
             "Paged messages found gone when read back (acked or removed meanwhile)", c.page_in_missing);
  out.scalar("carrier_page_in_failures_total", "counter",
             "Paged messages whose read failed (corrupt or I/O error): kept out of dispatch until a restart",
             c.page_in_failed);
  out.scalar("carrier_messages_ready", "gauge", "Messages waiting in queues and named subscriptions",
             std::uint64_t{s.messages_ready});
  out.scalar("carrier_messages_cold", "gauge",
             "Of the ready messages, those in queues' cold tails: kept in the store only, no memory per message",
             std::uint64_t{s.messages_cold});
  out.scalar("carrier_messages_unacked", "gauge", "Messages delivered and not yet acknowledged",
             std::uint64_t{s.messages_unacked});
  out.scalar("carrier_messages_scheduled", "gauge", "Messages waiting for a delivery time or a redelivery delay",
             std::uint64_t{s.scheduled});
  out.scalar("carrier_topic_backlog_dropped_total", "counter",
             "Messages plain topic subscribers lost to their backlog bound", s.backlog_dropped);
  out.scalar("carrier_queues", "gauge", "Queues, temporary queues and named subscriptions' queues",
             std::uint64_t{s.queues});
  out.scalar("carrier_topic_subscriptions", "gauge", "Topic subscriptions of connected consumers",
             std::uint64_t{s.topic_subscriptions});
  out.scalar("carrier_named_subscriptions", "gauge", "Durable and shared subscriptions",
             std::uint64_t{s.named_subscriptions});
  out.scalar("carrier_retained_messages", "gauge", "MQTT retained messages", std::uint64_t{s.retained});

  out.family("carrier_connections", "gauge", "Open client connections");
  for (std::string_view protocol : {"stomp", "mqtt", "http"}) {  // always present, so rate() and sums see zeros
    const auto it = in.broker.connections_by_protocol.find(std::string(protocol));
    out.sample("carrier_connections", {{"protocol", protocol}},
               std::uint64_t{it == in.broker.connections_by_protocol.end() ? 0 : it->second});
  }
  for (const auto& [protocol, n] : in.broker.connections_by_protocol) {
    if (protocol != "stomp" && protocol != "mqtt" && protocol != "http") {
      out.sample("carrier_connections", {{"protocol", protocol}}, std::uint64_t{n});
    }
  }

  out.family("carrier_refusals_total", "counter",
             "Clients refused for a limit ([limits], max_connecting, login failures), by reason");
  for (std::size_t i = 0; i < in.refusals.size(); ++i) {
    out.sample("carrier_refusals_total", {{"reason", net::to_string(static_cast<net::Refusal>(i))}}, in.refusals[i]);
  }
  out.scalar("carrier_destinations", "gauge", "Queues and named subscriptions, against limits.max_destinations",
             in.destinations);
  out.scalar("carrier_destinations_limit", "gauge", "limits.max_destinations (0: none)", in.max_destinations);

  out.scalar("carrier_memory_used_bytes", "gauge", "Bytes of messages and queues the broker holds",
             static_cast<double>(in.memory_used));
  out.scalar("carrier_memory_limit_bytes", "gauge", "core.memory_limit_bytes (0: no limit)", in.memory_limit);
  if (in.disk != nullptr) {
    out.scalar("carrier_disk_free_bytes", "gauge", "Free bytes on the store's disk at the last reading (once a second)",
               static_cast<double>(in.disk->free_bytes()));
    out.scalar("carrier_disk_free_limit_bytes", "gauge", "journal.disk_free_limit_bytes (0: off)",
               static_cast<double>(in.disk->limit()));
    out.scalar("carrier_disk_alarm", "gauge", "1 while free disk is under the limit and persistent publishers are held",
               std::uint64_t{in.disk->holding() ? 1u : 0u});
    out.scalar("carrier_disk_alarms_total", "counter", "Times the disk alarm went on since start",
               static_cast<double>(in.disk->alarms()));
  }

  out.histogram("carrier_publish_to_deliver_seconds",
                "From the broker taking a message to its first delivery (millisecond resolution)",
                c.publish_to_deliver);
  out.histogram("carrier_store_commit_duration_seconds",
                "From a batch handed to the store to its being durable (millisecond resolution)",
                in.store.commit_latency);
  out.scalar("carrier_store_records_total", "counter", "Records written to the store", in.store.records);
  out.scalar("carrier_store_failures_total", "counter", "Store batches that failed", in.store.failures);

  std::uint64_t dropped = 0;
  const auto rows = series_rows(in.broker, options, dropped);
  per_destination(out, rows, false);
  per_destination(out, rows, true);
  out.scalar("carrier_destination_series_dropped", "gauge",
             "Destinations metrics.destinations matched beyond metrics.max_destination_series", dropped);
  return out.take();
}

}  // namespace carrier::admin
