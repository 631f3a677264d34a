#pragma once

// carrier bench destinations: what many idle destinations cost (issue 17). Against a broker it
// starts (this carrier's serve, or --command for another one), over STOMP: creates N queues
// (one small persistent message each, or empty), N durable topic subscriptions left offline and
// K idle consumers, timing each step and reading the broker's RSS after each (/proc/PID/status
// of its process tree, as footprint does); then restarts the broker on the same data and times
// exec -> listening -> CONNECTED, and checks a queue's message came back.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_footprint.hpp"

namespace carrier::cli::bench {

// How a durable topic subscription is asked for on SUBSCRIBE (docs/stomp.md): ActiveMQ's
// client-id + activemq.subscriptionName, or RabbitMQ's durable:true auto-delete:false with the
// id as the name. Carrier takes both.
enum class DurableStyle { activemq, rabbitmq };

struct DestinationsOptions {
  std::string command;            // shell command starting the broker; empty: this carrier's serve
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;         // STOMP; 0: the started carrier's own
  std::uint64_t queues = 100000;
  bool empty_queues = false;      // queues made by SUBSCRIBE + UNSUBSCRIBE; this carrier also lists them
                                  // in [core] queues (an auto-created empty queue is freed)
  std::size_t message_size = 16;  // each queue's one persistent message
  std::uint64_t durable_subscriptions = 100000;
  std::uint64_t idle_consumers = 10000;  // on one queue, one connection
  DurableStyle durable_style = DurableStyle::activemq;
  bool restart = true;
  std::string store = "log";      // this carrier's --store
  std::string queue_prefix = "/queue/";  // RabbitMQ's /queue/NAME, ActiveMQ's and Carrier's too
  std::string topic_prefix = "/topic/";
  unsigned window = 1000;         // frames written before waiting for the receipt on the last
  double settle_s = 1;
  double start_timeout_s = 120;
  std::string login, passcode, vhost;
  bool json = false;
  bool quiet = false;
};

struct DestinationsStep {
  std::string name;                  // queues, durable_subscriptions, idle_consumers, restart
  std::uint64_t count = 0;
  double seconds = 0;
  std::optional<MemorySample> after;  // RSS once settled after the step
  std::optional<double> bytes_each;   // (after - before) / count
};

struct DestinationsResult {
  std::string command;
  int pid = 0;
  std::optional<double> listen_ms, start_ms;                  // first start
  std::optional<double> restart_listen_ms, restart_start_ms;  // start with everything made
  std::optional<MemorySample> idle;
  std::vector<DestinationsStep> steps;
  bool recovered_message = false;  // the last queue's message came back after the restart
  std::vector<std::string> errors;
};

nlohmann::json to_json(const DestinationsResult& r);
std::string to_text(const DestinationsResult& r);

int run_destinations(const DestinationsOptions& options);
void add_destinations_command(CLI::App& bench);

}  // namespace carrier::cli::bench
