#include "cli/bench_selector_backlog.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/bench_options.hpp"
#include "cli/bench_process.hpp"
#include "cli/bench_client_flags.hpp"
#include "cli/commands.hpp"

namespace carrier::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct SelectorBacklogOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 61613;
  std::uint64_t backlog = 1000000;
  std::uint64_t count = 10000;
  std::size_t size = 64;
  bool persistent = false;
  unsigned window = 1000;
  std::optional<int> pid;
  std::string login, passcode, vhost;
  bool json = false;
  bool quiet = false;
};

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int run(const SelectorBacklogOptions& o) {
  const auto address = resolve_address(o.host, o.port);
  if (!address) {
    std::fprintf(stderr, "carrier bench selector-backlog: cannot resolve %s\n", o.host.c_str());
    return kExitUsage;
  }
  const auto progress = [&o](const std::string& line) {
    if (!o.quiet) std::fprintf(stderr, "[selector-backlog] %s\n", line.c_str());
  };
  const std::string queue = fmt::format("/queue/bench.selector.{}.{}", ::getpid(),
                                        Clock::now().time_since_epoch().count() % 1000000);
  BlockingStomp producer, consumer;
  const auto fail = [&](const std::string& what, const std::string& e) {
    std::fprintf(stderr, "carrier bench selector-backlog: %s: %s\n", what.c_str(), e.c_str());
    return kExitFailure;
  };
  if (auto e = producer.open(*address, o.vhost, o.login, o.passcode, "")) return fail("producer", *e);
  if (auto e = consumer.open(*address, o.vhost, o.login, o.passcode, "")) return fail("consumer", *e);
  const std::string body(o.size, 's');
  // Writes n messages with `region`, a receipt at the end of each window, running `each_window`
  // (receiving, for the matching flow) after each.
  const auto send = [&](std::uint64_t n, const char* region, const auto& each_window) -> std::optional<std::string> {
    std::string out;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::vector<std::pair<std::string, std::string>> h{{"destination", queue}, {"region", region}};
      if (o.persistent) h.emplace_back("persistent", "true");
      const bool end = (i + 1) % o.window == 0 || i + 1 == n;
      const std::string receipt = fmt::format("r{}", i);
      if (end) h.emplace_back("receipt", receipt);
      out += stomp_frame("SEND", h, body);
      if (!end) continue;
      if (!producer.write(out)) return std::string("write failed");
      out.clear();
      if (auto e = producer.await_receipt(receipt)) return e;
      if (auto e = each_window((i % o.window) + 1)) return e;
    }
    return std::nullopt;
  };
  const auto nothing = [](std::uint64_t) -> std::optional<std::string> { return std::nullopt; };

  const auto fill_started = Clock::now();
  if (auto e = send(o.backlog, "us", nothing)) return fail("filling the backlog", *e);
  const double fill_s = since(fill_started);
  progress(fmt::format("{} refused messages in {} in {:.2f} s", o.backlog, queue, fill_s));

  const auto cpu = [&o]() -> std::optional<double> {
    if (!o.pid) return std::nullopt;
    const auto usage = read_process_usage(*o.pid);
    if (!usage) return std::nullopt;
    return usage->user_s + usage->system_s;
  };
  const auto subscribed = Clock::now();
  if (!consumer.write(stomp_frame("SUBSCRIBE", {{"destination", queue},
                                                {"id", "s"},
                                                {"ack", "auto"},
                                                {"selector", "region = 'eu'"},
                                                {"receipt", "sub"}}))) {
    return fail("consumer", "write failed");
  }
  if (auto e = consumer.await_receipt("sub")) return fail("subscribing", *e);
  // One matching message through first: the queue's first look at the backlog with the new
  // selector (each refused message evaluated once) is over when it arrives, so the timed flow
  // below is only the matching messages.
  if (auto e = send(1, "eu", [&](std::uint64_t) { return consumer.await_message(); })) return fail("warm-up", *e);
  const double subscribe_s = since(subscribed);
  const auto cpu_before = cpu();
  const auto flow_started = Clock::now();
  const std::uint64_t before = consumer.messages;
  auto receive = [&](std::uint64_t n) -> std::optional<std::string> {
    const std::uint64_t want = consumer.messages + n;
    while (consumer.messages < want) {
      if (auto e = consumer.await_message()) return e;
    }
    return std::nullopt;
  };
  if (auto e = send(o.count, "eu", receive)) return fail("the matching flow", *e);
  const double flow_s = since(flow_started);
  const auto cpu_after = cpu();
  const std::uint64_t received = consumer.messages - before;  // the warm-up message is not counted
  std::optional<double> cpu_s;
  if (cpu_before && cpu_after) cpu_s = *cpu_after - *cpu_before;
  progress(fmt::format("{} matching messages through in {:.3f} s", received, flow_s));
  nlohmann::json j{{"mode", "selector-backlog"},
                   {"server", fmt::format("{}:{}", o.host, o.port)},
                   {"queue", queue},
                   {"backlog", o.backlog},
                   {"count", o.count},
                   {"received", received},
                   {"fill_s", fill_s},
                   {"subscribe_s", subscribe_s},
                   {"flow_s", flow_s},
                   {"matching_per_s", flow_s > 0 ? static_cast<double>(received) / flow_s : 0},
                   {"broker_cpu_s", cpu_s ? nlohmann::json(*cpu_s) : nlohmann::json(nullptr)},
                   {"ok", received == o.count}};
  if (o.json) {
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << fmt::format("carrier bench selector-backlog ({})\n  backlog {} refused messages, filled in {:.2f} s\n"
                             "  subscribe with the selector: {:.3f} s\n"
                             "  {} matching messages sent and received in {:.3f} s ({:.0f}/s){}\n",
                             j["server"].get<std::string>(), o.backlog, fill_s, subscribe_s, received, flow_s,
                             j["matching_per_s"].get<double>(),
                             cpu_s ? fmt::format("; broker CPU {:.3f} s", *cpu_s) : std::string());
  }
  return received == o.count ? kExitOk : kExitFailure;
}

}  // namespace

void add_selector_backlog_command(CLI::App& bench) {
  struct Raw {
    SelectorBacklogOptions o;
    std::string server;
    int pid = 0;
  };
  auto raw = std::make_shared<Raw>();
  auto* cmd = bench.add_subcommand(
      "selector-backlog", "Matching messages through a selector behind a backlog it refuses (new queue, STOMP)");
  cmd->add_option("--server", raw->server, "The broker's STOMP listener, HOST:PORT (default 127.0.0.1:61613)");
  cmd->add_option("--backlog", raw->o.backlog, "Messages the selector refuses, queued first (default 1000000)");
  cmd->add_option("--count", raw->o.count, "Matching messages then sent and received (default 10000)");
  cmd->add_option("--size", raw->o.size, "Body bytes (default 64)");
  cmd->add_flag("--persistent", raw->o.persistent, "Send persistent messages");
  cmd->add_option("--pid", raw->pid, "The broker's process id: its CPU time over the matching flow is reported");
  add_bench_client_flags(*cmd, raw->o.login, raw->o.passcode, raw->o.vhost, raw->o.json, raw->o.quiet, false);
  cmd->callback([raw] {
    SelectorBacklogOptions o = raw->o;
    if (!raw->server.empty()) {
      const auto server = split_host_port(raw->server);
      if (!server) {
        std::fprintf(stderr, "carrier bench selector-backlog: --server must be HOST:PORT\n");
        std::exit(kExitUsage);
      }
      o.host = server->first;
      o.port = server->second;
    }
    if (raw->pid > 0) o.pid = raw->pid;
    if (o.count == 0) {
      std::fprintf(stderr, "carrier bench selector-backlog: --count must be at least 1\n");
      std::exit(kExitUsage);
    }
    if (o.vhost.empty()) o.vhost = o.host;
    std::exit(run(o));
  });
}

}  // namespace carrier::cli::bench
