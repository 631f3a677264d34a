#pragma once

// carrier bench fanout: topic fan-out to many subscribers (issue 17: deliveries/s and broker CPU
// per delivery with 10,000 subscribers against 4). The subscribers are plain non-blocking
// sockets on one epoll thread that count deliveries (a thread and a client per subscriber, as
// the load workers have, would measure this process rather than the broker); one publisher
// sends non-persistent messages (STOMP SEND, MQTT QoS 0 PUBLISH) as fast as the broker reads.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_options.hpp"
#include "cli/bench_process.hpp"

namespace carrier::cli::bench {

struct FanoutOptions {
  Protocol protocol = Protocol::stomp;
  std::string host = "127.0.0.1";
  std::uint16_t port = 61613;
  unsigned subscribers = 10000;
  std::uint64_t count = 100;     // messages published
  std::size_t size = 256;        // body bytes
  double rate = 0;               // messages published per second; 0: as fast as the broker reads
  std::string topic = "bench.fanout";
  std::optional<int> pid;        // the broker's: its CPU time is read around the run
  double drain_timeout_s = 10;   // give up after this long without a delivery
  std::string login, passcode, vhost;
  bool json = false;
  bool quiet = false;
};

struct FanoutResult {
  std::string protocol, server;
  unsigned subscribers = 0;
  std::uint64_t published = 0;
  std::uint64_t expected = 0;    // subscribers x published
  std::uint64_t received = 0;
  double subscribe_s = 0;        // connecting and subscribing them all
  double publish_s = 0;          // first send to the broker's confirmation of the last
  double deliver_s = 0;          // first send to the last delivery
  // What --pid spent over the run: user and system CPU apart, since the kernel's share (socket
  // writes, first touches of pages) is what grows with the subscriber count.
  std::optional<ProcessUsage> broker;
  std::vector<std::string> errors;

  double deliveries_per_s() const { return deliver_s > 0 ? static_cast<double>(received) / deliver_s : 0; }
  std::optional<double> broker_cpu_s() const {
    if (!broker) return std::nullopt;
    return broker->user_s + broker->system_s;
  }
  std::optional<double> cpu_ns_per_delivery() const {
    if (!broker || received == 0) return std::nullopt;
    return *broker_cpu_s() * 1e9 / static_cast<double>(received);
  }
  std::optional<double> per_delivery_ns(double ProcessUsage::*part) const {
    if (!broker || received == 0) return std::nullopt;
    return (*broker).*part * 1e9 / static_cast<double>(received);
  }
};

nlohmann::json to_json(const FanoutResult& r);
std::string to_text(const FanoutResult& r);

int run_fanout(const FanoutOptions& options);
void add_fanout_command(CLI::App& bench);

}  // namespace carrier::cli::bench
