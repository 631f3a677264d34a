#include "cli/bench_destinations.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/bench_process.hpp"
#include "cli/bench_client_flags.hpp"
#include "cli/commands.hpp"

namespace carrier::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr std::uint64_t kPerConnection = 5000;  // consumers per connection: under stomp.max_subscriptions

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::optional<double> bytes_each(const std::optional<MemorySample>& before, const std::optional<MemorySample>& after,
                                 std::uint64_t count) {
  if (!before || !after || count == 0) return std::nullopt;
  return (static_cast<double>(after->rss_kib) - static_cast<double>(before->rss_kib)) * 1024.0 /
         static_cast<double>(count);
}

class Destinations {
 public:
  explicit Destinations(const DestinationsOptions& o) : o_(o) {}
  ~Destinations() {
    (void)broker_.stop();
    if (!workdir_.empty()) {
      std::error_code ec;
      fs::remove_all(workdir_, ec);
    }
  }
  int run();

 private:
  void progress(const std::string& line) const {
    if (!o_.quiet) std::fprintf(stderr, "[destinations] %s\n", line.c_str());
  }
  bool start(bool first);
  void settle() const { std::this_thread::sleep_for(std::chrono::duration<double>(o_.settle_s)); }
  std::optional<MemorySample> memory() const { return read_memory(broker_.pid()); }
  // Writes `count` frames made by `make(i)`, a receipt on each window's last; `tag` names them.
  std::optional<std::string> pipeline(BlockingStomp& line, std::uint64_t from, std::uint64_t count,
                                      const std::function<std::string(std::uint64_t, const std::string*)>& make);
  void make_queues();
  void make_durable_subscriptions();
  void make_idle_consumers();
  void restart();
  void step_done(DestinationsStep step, const std::optional<MemorySample>& before) {
    settle();
    step.after = memory();
    step.bytes_each = bytes_each(before, step.after, step.count);
    progress(fmt::format("{}: {} in {:.2f} s{}", step.name, step.count, step.seconds,
                         step.bytes_each ? fmt::format(", {:.0f} bytes each", *step.bytes_each) : ""));
    r_.steps.push_back(std::move(step));
  }
  std::string queue(std::uint64_t i) const { return fmt::format("{}bench.dest.q{}", o_.queue_prefix, i); }

  DestinationsOptions o_;
  DestinationsResult r_;
  BrokerProcess broker_;
  Address address_;
  fs::path workdir_;
  fs::path log_;
  std::vector<std::string> argv_;
};

bool Destinations::start(bool first) {
  if (auto e = broker_.start(argv_, log_)) {
    r_.errors.push_back(*e);
    return false;
  }
  r_.pid = broker_.pid();
  StartTimes times;
  if (auto e = await_stomp_start(broker_, address_, log_, o_.vhost, o_.login, o_.passcode, o_.start_timeout_s, times)) {
    r_.errors.push_back(*e);
    return false;
  }
  (first ? r_.listen_ms : r_.restart_listen_ms) = times.listen_ms;
  (first ? r_.start_ms : r_.restart_start_ms) = times.connected_ms;
  progress(fmt::format("{}: accepting after {:.0f} ms, CONNECTED after {:.0f} ms", first ? "start" : "restart",
                       times.listen_ms, times.connected_ms));
  return true;
}

std::optional<std::string> Destinations::pipeline(
    BlockingStomp& line, std::uint64_t from, std::uint64_t count,
    const std::function<std::string(std::uint64_t, const std::string*)>& make) {
  std::string out;
  auto last_report = Clock::now();
  for (std::uint64_t i = from; i < from + count; ++i) {
    const bool window_end = (i - from + 1) % o_.window == 0 || i + 1 == from + count;
    const std::string receipt = fmt::format("w{}", i);
    out += make(i, window_end ? &receipt : nullptr);
    if (!window_end) continue;
    if (!line.write(out)) return std::string("write: ") + std::strerror(errno);
    out.clear();
    if (auto e = line.await_receipt(receipt)) return e;
    if (Clock::now() - last_report > std::chrono::seconds(5)) {
      last_report = Clock::now();
      progress(fmt::format("  {} of {}", i - from + 1, count));
    }
  }
  return std::nullopt;
}

void Destinations::make_queues() {
  const auto before = memory();
  DestinationsStep step{o_.empty_queues ? "empty_queues" : "queues", o_.queues};
  const auto t = Clock::now();
  BlockingStomp line;
  if (auto e = line.open(address_, o_.vhost, o_.login, o_.passcode, "")) {
    r_.errors.push_back("queues: " + *e);
    return;
  }
  const std::string body(o_.message_size, 'q');
  {
    auto e = pipeline(line, 0, o_.queues, [&](std::uint64_t i, const std::string* receipt) {
      if (o_.empty_queues) {
        std::vector<std::pair<std::string, std::string>> sub{{"destination", queue(i)}, {"id", "e"}};
        std::vector<std::pair<std::string, std::string>> unsub{{"id", "e"}};
        if (receipt) unsub.emplace_back("receipt", *receipt);
        return stomp_frame("SUBSCRIBE", sub) + stomp_frame("UNSUBSCRIBE", unsub);
      }
      std::vector<std::pair<std::string, std::string>> h{{"destination", queue(i)}, {"persistent", "true"}};
      if (receipt) h.emplace_back("receipt", *receipt);
      return stomp_frame("SEND", h, body);
    });
    if (e) {
      r_.errors.push_back("queues: " + *e);
      return;
    }
  }
  step.seconds = seconds_since(t);
  step_done(std::move(step), before);
}

void Destinations::make_durable_subscriptions() {
  const auto before = memory();
  DestinationsStep step{"durable_subscriptions", o_.durable_subscriptions};
  const auto t = Clock::now();
  BlockingStomp line;
  if (auto e = line.open(address_, o_.vhost, o_.login, o_.passcode, "bench-destinations")) {
    r_.errors.push_back("durable subscriptions: " + *e);
    return;
  }
  // Each one made and detached at once (a plain UNSUBSCRIBE keeps a durable subscription,
  // docs/stomp.md), so one connection stays under its subscription limit.
  auto e = pipeline(line, 0, o_.durable_subscriptions, [&](std::uint64_t i, const std::string* receipt) {
    const std::string id = fmt::format("bench.dest.s{}", i);
    std::vector<std::pair<std::string, std::string>> sub{
        {"destination", fmt::format("{}bench.dest.t{}", o_.topic_prefix, i)}, {"id", id}, {"ack", "client-individual"}};
    if (o_.durable_style == DurableStyle::activemq) {
      sub.emplace_back("activemq.subscriptionName", id);
    } else {
      sub.emplace_back("durable", "true");
      sub.emplace_back("auto-delete", "false");
    }
    std::vector<std::pair<std::string, std::string>> unsub{{"id", id}};
    if (receipt) unsub.emplace_back("receipt", *receipt);
    return stomp_frame("SUBSCRIBE", sub) + stomp_frame("UNSUBSCRIBE", unsub);
  });
  if (e) {
    r_.errors.push_back("durable subscriptions: " + *e);
    return;
  }
  step.seconds = seconds_since(t);
  step_done(std::move(step), before);
}

void Destinations::make_idle_consumers() {
  const auto before = memory();
  DestinationsStep step{"idle_consumers", o_.idle_consumers};
  const auto t = Clock::now();
  std::vector<std::unique_ptr<BlockingStomp>> lines;
  for (std::uint64_t made = 0; made < o_.idle_consumers;) {
    const std::uint64_t n = std::min(kPerConnection, o_.idle_consumers - made);
    lines.push_back(std::make_unique<BlockingStomp>());
    if (auto e = lines.back()->open(address_, o_.vhost, o_.login, o_.passcode, "")) {
      r_.errors.push_back("idle consumers: " + *e);
      return;
    }
    auto e = pipeline(*lines.back(), made, n, [&](std::uint64_t i, const std::string* receipt) {
      std::vector<std::pair<std::string, std::string>> h{
          {"destination", o_.queue_prefix + "bench.dest.idle"}, {"id", fmt::format("c{}", i)}, {"ack", "client"}};
      if (receipt) h.emplace_back("receipt", *receipt);
      return stomp_frame("SUBSCRIBE", h);
    });
    if (e) {
      r_.errors.push_back("idle consumers: " + *e);
      return;
    }
    made += n;
  }
  step.seconds = seconds_since(t);
  // Measured with them attached; the lines close (and the consumers go) when this returns.
  step_done(std::move(step), before);
}

void Destinations::restart() {
  DestinationsStep step{"restart", o_.queues + o_.durable_subscriptions};
  const auto t = Clock::now();
  if (!broker_.stop()) r_.errors.push_back("the broker did not stop within 30 s of SIGTERM: killed");
  progress(fmt::format("stopped in {:.2f} s", seconds_since(t)));
  if (!start(false)) return;
  step.seconds = *r_.restart_start_ms / 1000.0;
  if (o_.queues > 0 && !o_.empty_queues) {
    BlockingStomp line;
    if (auto e = line.open(address_, o_.vhost, o_.login, o_.passcode, "")) {
      r_.errors.push_back("after the restart: " + *e);
      return;
    }
    const std::string check = queue(o_.queues - 1);
    (void)line.write(stomp_frame("SUBSCRIBE", {{"destination", check}, {"id", "check"}, {"ack", "auto"}}));
    if (auto e = line.await_message()) {
      r_.errors.push_back("after the restart, no message in " + check + ": " + *e);
    } else {
      r_.recovered_message = true;
    }
  }
  settle();
  step.after = memory();
  r_.steps.push_back(std::move(step));
}

int Destinations::run() {
  // Every idle consumer's connection is a descriptor here, and the started broker inherits it.
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
  }
  char pattern[] = "/tmp/carrier-destinations-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    std::fprintf(stderr, "carrier bench destinations: mkdtemp: %s\n", std::strerror(errno));
    return kExitFailure;
  }
  workdir_ = pattern;
  log_ = workdir_ / "broker.log";
  if (o_.command.empty()) {
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
      std::fprintf(stderr, "carrier bench destinations: cannot find this executable: %s\n", ec.message().c_str());
      return kExitFailure;
    }
    o_.host = "127.0.0.1";
    o_.port = free_port();
    // Room for every destination (the default [limits] max_destinations is 100,000 in all).
    std::string config = fmt::format("[limits]\nmax_destinations = {}\n",
                                     o_.queues + o_.durable_subscriptions + 1000);
    if (o_.empty_queues) {
      // Listed, so that they stay once their consumer left (an auto-created empty queue is freed).
      config += "[core]\nqueues = [";
      for (std::uint64_t i = 0; i < o_.queues; ++i) {
        config += fmt::format("{}\"bench.dest.q{}\"", i ? "," : "", i);
      }
      config += "]\n";
    }
    std::ofstream(workdir_ / "carrier.toml") << config;
    argv_ = {self.string(), "serve", "--stomp", fmt::format("127.0.0.1:{}", o_.port), "--mqtt", "off", "--http", "off",
             "--store", o_.store, "--data-dir", (workdir_ / "data").string(), "--config",
             (workdir_ / "carrier.toml").string()};
    for (std::size_t i = 0; i < argv_.size(); ++i) r_.command += (i ? " " : "") + argv_[i];
  } else {
    argv_ = {"/bin/sh", "-c", "exec " + o_.command};
    r_.command = o_.command;
  }
  if (o_.vhost.empty()) o_.vhost = o_.host;
  const auto a = resolve_address(o_.host, o_.port);
  if (!a) {
    std::fprintf(stderr, "carrier bench destinations: cannot resolve %s\n", o_.host.c_str());
    return kExitUsage;
  }
  address_ = *a;
  progress("starting: " + r_.command);
  if (start(true)) {
    settle();
    r_.idle = memory();
    if (o_.queues > 0) make_queues();
    if (r_.errors.empty() && o_.durable_subscriptions > 0) make_durable_subscriptions();
    if (r_.errors.empty() && o_.idle_consumers > 0) make_idle_consumers();
    if (r_.errors.empty() && o_.restart) restart();
  }
  (void)broker_.stop();
  if (o_.json) {
    std::cout << to_json(r_).dump() << std::endl;
  } else {
    std::cout << to_text(r_) << std::flush;
  }
  return r_.errors.empty() ? kExitOk : kExitFailure;
}

nlohmann::json memory_json(const std::optional<MemorySample>& m) {
  if (!m) return nullptr;
  return {{"rss_kib", m->rss_kib}, {"anon_kib", m->anon_kib}, {"processes", m->processes}};
}

template <typename T>
nlohmann::json maybe(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json to_json(const DestinationsResult& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : r.steps) {
    steps.push_back({{"name", s.name},
                     {"count", s.count},
                     {"seconds", s.seconds},
                     {"after", memory_json(s.after)},
                     {"bytes_each", maybe(s.bytes_each)}});
  }
  return {{"mode", "destinations"},
          {"command", r.command},
          {"listen_ms", maybe(r.listen_ms)},
          {"start_ms", maybe(r.start_ms)},
          {"restart_listen_ms", maybe(r.restart_listen_ms)},
          {"restart_start_ms", maybe(r.restart_start_ms)},
          {"idle", memory_json(r.idle)},
          {"steps", steps},
          {"recovered_message", r.recovered_message},
          {"errors", r.errors}};
}

std::string to_text(const DestinationsResult& r) {
  std::string s = "carrier bench destinations\n  broker: " + r.command + "\n";
  if (r.start_ms) s += fmt::format("  start: listening {:.0f} ms, CONNECTED {:.0f} ms\n", *r.listen_ms, *r.start_ms);
  if (r.idle) s += fmt::format("  idle RSS: {:.1f} MiB\n", static_cast<double>(r.idle->rss_kib) / 1024.0);
  for (const auto& step : r.steps) {
    s += fmt::format("  {:<22} {:>8}  {:>8.2f} s", step.name, step.count, step.seconds);
    if (step.count > 0 && step.seconds > 0 && step.name != "restart") {
      s += fmt::format("  {:>9.0f}/s", static_cast<double>(step.count) / step.seconds);
    }
    if (step.after) s += fmt::format("  RSS {:.1f} MiB", static_cast<double>(step.after->rss_kib) / 1024.0);
    if (step.bytes_each) s += fmt::format("  {:.0f} bytes each", *step.bytes_each);
    s += "\n";
  }
  if (r.restart_start_ms) {
    s += fmt::format("  restart: listening {:.0f} ms, CONNECTED {:.0f} ms, a queue's message back: {}\n",
                     *r.restart_listen_ms, *r.restart_start_ms, r.recovered_message ? "yes" : "no");
  }
  for (const auto& e : r.errors) s += "  error: " + e + "\n";
  return s;
}

int run_destinations(const DestinationsOptions& options) {
  Destinations d(options);
  return d.run();
}

void add_destinations_command(CLI::App& bench) {
  struct Raw {
    DestinationsOptions o;
    std::string server;
    std::string durable_style = "activemq";
    bool no_restart = false;
  };
  auto raw = std::make_shared<Raw>();
  auto* cmd = bench.add_subcommand(
      "destinations",
      "Create many queues, durable subscriptions and idle consumers; time it, read the broker's RSS, restart it");
  cmd->add_option("--command", raw->o.command,
                  "Shell command that starts the broker (needs --server); default: this carrier's serve with a "
                  "temporary data dir");
  cmd->add_option("--server", raw->server, "Where that broker's STOMP listens, HOST:PORT (loopback only)");
  cmd->add_option("--queues", raw->o.queues, "Queues to create, one small persistent message each (default 100000)");
  cmd->add_flag("--empty-queues", raw->o.empty_queues,
                "Make the queues empty: SUBSCRIBE + UNSUBSCRIBE (this carrier: listed in [core] queues)");
  cmd->add_option("--message-size", raw->o.message_size, "Body bytes of each queue's message (default 16)");
  cmd->add_option("--durable-subscriptions", raw->o.durable_subscriptions,
                  "Durable topic subscriptions to create and leave offline (default 100000)");
  cmd->add_option("--durable-style", raw->durable_style,
                  "activemq (client-id + activemq.subscriptionName) | rabbitmq (durable:true, auto-delete:false)");
  cmd->add_option("--idle-consumers", raw->o.idle_consumers, "Idle consumers on one queue (default 10000)");
  cmd->add_flag("--no-restart", raw->no_restart, "Do not restart the broker at the end");
  cmd->add_option("--store", raw->o.store, "This carrier's --store (default log)");
  cmd->add_option("--settle", raw->o.settle_s, "Seconds to wait before each memory reading (default 1)");
  cmd->add_option("--start-timeout", raw->o.start_timeout_s,
                  "Give up if the broker does not answer STOMP CONNECT this long after its start or its restart "
                  "(default 120 s)");
  add_bench_client_flags(*cmd, raw->o.login, raw->o.passcode, raw->o.vhost, raw->o.json, raw->o.quiet, false);
  cmd->callback([raw] {
    DestinationsOptions o = raw->o;
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "carrier bench destinations: %s\n", message.c_str());
      std::exit(kExitUsage);
    };
    if (raw->durable_style == "activemq") {
      o.durable_style = DurableStyle::activemq;
    } else if (raw->durable_style == "rabbitmq") {
      o.durable_style = DurableStyle::rabbitmq;
    } else {
      usage("--durable-style must be activemq or rabbitmq");
    }
    o.restart = !raw->no_restart;
    if (!raw->server.empty()) {
      const auto server = split_host_port(raw->server);
      if (!server) usage("--server must be HOST:PORT");
      o.host = server->first;
      o.port = server->second;
    }
    if (!o.command.empty() && o.port == 0) usage("--command needs --server HOST:PORT");
    if (!is_loopback(o.host)) usage("--server must be a loopback address: the broker's /proc is read");
    std::exit(run_destinations(o));
  });
}

}  // namespace carrier::cli::bench
