#include "cli/bench_backlog.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "cli/bench_client_flags.hpp"
#include "cli/bench_options.hpp"
#include "cli/bench_process.hpp"
#include "cli/commands.hpp"

namespace carrier::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

double backlog_seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The value of header `name` in a frame's head, or empty.
std::string_view frame_header(std::string_view frame, std::string_view name) {
  const auto head_end = frame.find("\n\n");
  const std::string key = fmt::format("\n{}:", name);
  const auto at = frame.find(key);
  if (at == std::string_view::npos || (head_end != std::string_view::npos && at > head_end)) return {};
  const auto from = at + key.size();
  const auto to = frame.find('\n', from);
  return frame.substr(from, to == std::string_view::npos ? std::string_view::npos : to - from);
}

class Backlog {
 public:
  explicit Backlog(const BacklogOptions& o) : o_(o) {}
  ~Backlog() {
    if (!o_.attach) (void)broker_.stop();
    if (remove_workdir_) {
      std::error_code ec;
      fs::remove_all(workdir_, ec);
    }
  }
  int run();

 private:
  void progress(const std::string& line) const {
    if (!o_.quiet) std::fprintf(stderr, "[backlog] %s\n", line.c_str());
  }
  std::optional<MemorySample> memory() const {
    const int pid = o_.attach ? o_.pid.value_or(-1) : broker_.pid();
    return pid > 0 ? read_memory(pid) : std::nullopt;
  }
  bool prepare();
  bool start(bool first);
  void fill();
  void restart();
  void drain();

  BacklogOptions o_;
  BacklogResult r_;
  BrokerProcess broker_;
  Address address_;
  fs::path workdir_;
  bool remove_workdir_ = false;
  fs::path log_;
  std::vector<std::string> argv_;
};

bool Backlog::prepare() {
  if (o_.attach) {
    r_.command = fmt::format("(running broker at {}:{})", o_.host, o_.port);
  } else {
    char pattern[] = "/tmp/carrier-bench-backlog-XXXXXX";
    if (::mkdtemp(pattern) == nullptr) {
      r_.errors.push_back(std::string("mkdtemp: ") + std::strerror(errno));
      return false;
    }
    workdir_ = pattern;
    remove_workdir_ = true;
    log_ = workdir_ / "broker.log";
    if (o_.command.empty()) {
      std::error_code ec;
      const auto self = fs::read_symlink("/proc/self/exe", ec);
      if (ec) {
        r_.errors.push_back("cannot find this executable: " + ec.message());
        return false;
      }
      o_.host = "127.0.0.1";
      o_.port = free_port();
      const fs::path data = o_.data_dir.empty() ? workdir_ / "data" : fs::path(o_.data_dir);
      argv_ = {self.string(), "serve",   "--stomp",  fmt::format("127.0.0.1:{}", o_.port), "--mqtt",
               "off",         "--http",  "off",      "--store",
               o_.store,      "--data-dir", data.string(), "--log-level", "warn"};
      if (!o_.config.empty()) {
        argv_.push_back("--config");
        argv_.push_back(fs::absolute(o_.config).string());
      }
      for (std::size_t i = 0; i < argv_.size(); ++i) r_.command += (i ? " " : "") + argv_[i];
    } else {
      argv_ = {"/bin/sh", "-c", "exec " + o_.command};
      r_.command = o_.command;
    }
  }
  if (o_.vhost.empty()) o_.vhost = o_.host;
  const auto a = resolve_address(o_.host, o_.port);
  if (!a) {
    r_.errors.push_back("cannot resolve " + o_.host);
    return false;
  }
  address_ = *a;
  return true;
}

bool Backlog::start(bool first) {
  if (auto e = broker_.start(argv_, log_)) {
    r_.errors.push_back(*e);
    return false;
  }
  StartTimes times;
  if (auto e = await_stomp_start(broker_, address_, log_, o_.vhost, o_.login, o_.passcode, o_.start_timeout_s, times)) {
    r_.errors.push_back(*e);
    return false;
  }
  if (!first) {
    r_.restart_listen_ms = times.listen_ms;
    r_.restart_start_ms = times.connected_ms;
    r_.ready = memory();
  }
  progress(fmt::format("{}: accepting after {:.0f} ms, CONNECTED after {:.0f} ms", first ? "start" : "restart",
                       times.listen_ms, times.connected_ms));
  return true;
}

void Backlog::fill() {
  BlockingStomp producer;
  if (auto e = producer.open(address_, o_.vhost, o_.login, o_.passcode, "")) {
    r_.errors.push_back("producer: " + *e);
    return;
  }
  const std::string body(o_.size, 'b');
  const auto begin = Clock::now();
  auto last_report = begin;
  std::string out;
  std::optional<std::string> pending;  // the receipt of the window before this one
  for (std::uint64_t i = 0; i < o_.count; ++i) {
    const bool window_end = (i + 1) % o_.window == 0 || i + 1 == o_.count;
    std::vector<std::pair<std::string, std::string>> h{
        {"destination", o_.dest}, {"persistent", o_.non_persistent ? "false" : "true"}, {"bench-seq", std::to_string(i)}};
    const std::string receipt = fmt::format("f{}", i);
    if (window_end) h.emplace_back("receipt", receipt);
    out += stomp_frame("SEND", h, body);
    if (!window_end) continue;
    if (!producer.write(out)) {
      r_.errors.push_back("producer: write failed");
      return;
    }
    out.clear();
    // Two windows in flight: the next is written while the broker confirms this one.
    if (pending) {
      if (auto e = producer.await_receipt(*pending)) {
        r_.errors.push_back(fmt::format("fill, at {}: {}", i, *e));
        return;
      }
    }
    pending = receipt;
    if (Clock::now() - last_report > std::chrono::seconds(5)) {
      last_report = Clock::now();
      progress(fmt::format("fill: {} of {} ({:.0f}/s)", i + 1, o_.count,
                           static_cast<double>(i + 1) / backlog_seconds_since(begin)));
    }
  }
  if (pending) {
    if (auto e = producer.await_receipt(*pending)) {
      r_.errors.push_back("fill, last receipt: " + *e);
      return;
    }
  }
  BacklogPhase phase{"fill", o_.count, backlog_seconds_since(begin), memory()};
  progress(fmt::format("fill: {} in {:.2f} s", phase.count, phase.seconds));
  r_.phases.push_back(phase);
}

void Backlog::restart() {
  if (o_.crash) {
    progress("restart: killing the broker (SIGKILL)");
    broker_.kill();
    r_.crashed = true;
  } else {
    progress("restart: stopping the broker");
    (void)broker_.stop(std::chrono::seconds(120));
  }
  (void)start(false);
}

void Backlog::drain() {
  BlockingStomp consumer;
  if (auto e = consumer.open(address_, o_.vhost, o_.login, o_.passcode, "")) {
    r_.errors.push_back("consumer: " + *e);
    return;
  }
  const std::string prefetch = std::to_string(o_.prefetch);
  if (!consumer.write(stomp_frame("SUBSCRIBE", {{"id", "0"},
                                                {"destination", o_.dest},
                                                {"ack", "client"},
                                                {"activemq.prefetchSize", prefetch},
                                                {"prefetch-count", prefetch}}))) {
    r_.errors.push_back("consumer: write failed");
    return;
  }
  std::vector<bool> seen(o_.count);
  std::uint64_t distinct = 0, highest = 0;
  bool any = false;
  const unsigned ack_every = std::max(1u, o_.prefetch / 2);
  std::string last_ack;
  const auto begin = Clock::now();
  auto last_report = begin;
  while (distinct < o_.count) {
    if (auto e = consumer.await_message()) {
      r_.errors.push_back(fmt::format("drain, after {} messages: {}", r_.received, *e));
      break;
    }
    ++r_.received;
    const std::string_view frame = consumer.last_frame();
    const auto seq_text = frame_header(frame, "bench-seq");
    std::uint64_t seq = 0;
    if (std::from_chars(seq_text.data(), seq_text.data() + seq_text.size(), seq).ec != std::errc() || seq >= o_.count) {
      r_.errors.push_back(fmt::format("drain: a message without a valid bench-seq ({})", seq_text));
      break;
    }
    if (seen[seq]) {
      ++r_.duplicates;
    } else {
      seen[seq] = true;
      ++distinct;
      if (any && seq < highest) ++r_.out_of_order;
      if (!any || seq > highest) highest = seq;
      any = true;
    }
    last_ack = std::string(frame_header(frame, "ack"));
    if (last_ack.empty()) last_ack = std::string(frame_header(frame, "message-id"));
    if (r_.received % ack_every == 0 && !consumer.write(stomp_frame("ACK", {{"id", last_ack}}))) {
      r_.errors.push_back("consumer: write failed");
      break;
    }
    if (Clock::now() - last_report > std::chrono::seconds(5)) {
      last_report = Clock::now();
      progress(fmt::format("drain: {} of {} ({:.0f}/s)", distinct, o_.count,
                           static_cast<double>(distinct) / backlog_seconds_since(begin)));
    }
  }
  const double seconds = backlog_seconds_since(begin);
  if (!last_ack.empty()) {
    // The last ack, then a receipt the broker sends once it has handled every ack before it:
    // it has let the messages go before memory is read.
    if (r_.received % ack_every != 0) (void)consumer.write(stomp_frame("ACK", {{"id", last_ack}}));
    (void)consumer.write(stomp_frame("UNSUBSCRIBE", {{"id", "0"}, {"receipt", "drained"}}));
    if (auto e = consumer.await_receipt("drained")) r_.errors.push_back("drain, last ack: " + *e);
  }
  r_.missing = o_.count - distinct;
  BacklogPhase phase{"drain", distinct, seconds, memory()};
  progress(fmt::format("drain: {} in {:.2f} s, {} duplicates, {} out of order, {} missing", distinct, seconds,
                       r_.duplicates, r_.out_of_order, r_.missing));
  r_.phases.push_back(phase);
  if (r_.missing > 0 || r_.duplicates > 0 || r_.out_of_order > 0) {
    r_.errors.push_back(fmt::format("the drain got {} duplicates, {} out of order, {} missing", r_.duplicates,
                                    r_.out_of_order, r_.missing));
  }
}

int Backlog::run() {
  if (prepare()) {
    if (!o_.attach) {
      progress("starting: " + r_.command);
      (void)start(true);
    }
    if (r_.errors.empty() && o_.fill) fill();
    if (r_.errors.empty() && o_.restart && !o_.attach) restart();
    if (r_.errors.empty() && o_.drain) drain();
  }
  if (!o_.attach) (void)broker_.stop(std::chrono::seconds(120));
  if (o_.json) {
    std::cout << to_json(r_).dump() << std::endl;
  } else {
    std::cout << to_text(r_) << std::flush;
  }
  return r_.errors.empty() ? kExitOk : kExitFailure;
}

nlohmann::json backlog_memory_json(const std::optional<MemorySample>& m) {
  if (!m) return nullptr;
  return {{"rss_kib", m->rss_kib}, {"hwm_kib", m->hwm_kib}, {"processes", m->processes}};
}

template <typename T>
nlohmann::json backlog_maybe(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

std::string mib(const std::optional<MemorySample>& m, bool peak) {
  if (!m) return "?";
  return fmt::format("{:.0f} MiB", static_cast<double>(peak ? m->hwm_kib : m->rss_kib) / 1024.0);
}

}  // namespace

nlohmann::json to_json(const BacklogResult& r) {
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : r.phases) {
    phases.push_back({{"name", p.name},
                      {"count", p.count},
                      {"seconds", p.seconds},
                      {"rate", p.seconds > 0 ? static_cast<double>(p.count) / p.seconds : 0.0},
                      {"after", backlog_memory_json(p.after)}});
  }
  return {{"mode", "backlog"},
          {"command", r.command},
          {"phases", phases},
          {"restart_listen_ms", backlog_maybe(r.restart_listen_ms)},
          {"restart_start_ms", backlog_maybe(r.restart_start_ms)},
          {"restart_by", r.restart_listen_ms ? nlohmann::json(r.crashed ? "SIGKILL" : "SIGTERM") : nlohmann::json()},
          {"ready", backlog_memory_json(r.ready)},
          {"received", r.received},
          {"duplicates", r.duplicates},
          {"out_of_order", r.out_of_order},
          {"missing", r.missing},
          {"errors", r.errors}};
}

std::string to_text(const BacklogResult& r) {
  std::string s = "carrier bench backlog\n  broker: " + r.command + "\n";
  for (const auto& p : r.phases) {
    s += fmt::format("  {:<6} {:>10} in {:>8.2f} s  {:>9.0f}/s  RSS {} (peak {})\n", p.name, p.count, p.seconds,
                     p.seconds > 0 ? static_cast<double>(p.count) / p.seconds : 0.0, mib(p.after, false),
                     mib(p.after, true));
    if (p.name == "fill" && r.restart_start_ms) {
      s += fmt::format("  restart: listening {:.0f} ms, CONNECTED {:.0f} ms, RSS then {}\n", *r.restart_listen_ms,
                       *r.restart_start_ms, mib(r.ready, false));
    }
  }
  if (r.received > 0) {
    s += fmt::format("  drained {} messages: {} duplicates, {} out of order, {} missing\n", r.received, r.duplicates,
                     r.out_of_order, r.missing);
  }
  for (const auto& e : r.errors) s += "  error: " + e + "\n";
  return s;
}

int run_backlog(const BacklogOptions& options) {
  Backlog b(options);
  return b.run();
}

void add_backlog_command(CLI::App& bench) {
  struct Raw {
    BacklogOptions o;
    std::string server;
    bool no_fill = false, no_restart = false, no_drain = false;
    int pid = 0;
  };
  auto raw = std::make_shared<Raw>();
  auto* cmd = bench.add_subcommand(
      "backlog", "Fill one queue with persistent messages, restart the broker, drain it in order; rates and RSS");
  cmd->add_option("--command", raw->o.command,
                  "Shell command that starts the broker (needs --server); default: this carrier's serve with a "
                  "temporary data dir");
  cmd->add_option("--server", raw->server,
                  "Where the broker's STOMP listens, HOST:PORT (loopback only); without --command: a broker "
                  "already running (no restart)");
  cmd->add_option("--pid", raw->pid, "The running broker's process id, for its RSS (with --server, no --command)");
  cmd->add_option("--count", raw->o.count, "Messages (default 1000000)");
  cmd->add_option("--size", raw->o.size, "Body bytes (default 1024)");
  cmd->add_option("--dest", raw->o.dest, "The queue (default /queue/bench.backlog)");
  cmd->add_option("--config", raw->o.config, "This carrier's --config file, e.g. with [core] memory_budget_bytes");
  cmd->add_option("--store", raw->o.store, "This carrier's --store (default log)");
  cmd->add_option("--data-dir", raw->o.data_dir, "This carrier's --data-dir (default: a temporary one, removed)");
  cmd->add_option("--window", raw->o.window, "Messages per receipt while filling (default 1000)");
  cmd->add_option("--prefetch", raw->o.prefetch, "The draining consumer's prefetch (default 1000)");
  cmd->add_flag("--no-fill", raw->no_fill, "Do not fill: drain what is there (--count of them)");
  cmd->add_flag("--no-restart", raw->no_restart, "Do not restart the broker between fill and drain");
  cmd->add_flag("--crash", raw->o.crash, "Restart by SIGKILL right after the fill (a crash), not SIGTERM");
  cmd->add_flag("--no-drain", raw->no_drain, "Leave the backlog in the broker");
  cmd->add_flag("--non-persistent", raw->o.non_persistent,
                "Fill with non-persistent messages (past the memory budget they are spilled into the store; a "
                "restart drops them, so this needs --no-restart)");
  add_bench_client_flags(*cmd, raw->o.login, raw->o.passcode, raw->o.vhost, raw->o.json, raw->o.quiet, false);
  cmd->callback([raw] {
    BacklogOptions o = raw->o;
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "carrier bench backlog: %s\n", message.c_str());
      std::exit(kExitUsage);
    };
    o.fill = !raw->no_fill;
    o.restart = !raw->no_restart;
    o.drain = !raw->no_drain;
    if (!raw->server.empty()) {
      const auto server = split_host_port(raw->server);
      if (!server) usage("--server must be HOST:PORT");
      o.host = server->first;
      o.port = server->second;
      o.attach = o.command.empty();
    }
    if (raw->pid > 0) o.pid = raw->pid;
    if (!o.command.empty() && o.port == 0) usage("--command needs --server HOST:PORT");
    if (!is_loopback(o.host)) usage("--server must be a loopback address: the broker's /proc is read");
    if (o.non_persistent && o.restart && o.fill && o.drain) {
      usage("--non-persistent needs --no-restart: a restart drops non-persistent messages");
    }
    if (o.count == 0) usage("--count must be at least 1");
    if (o.window == 0) usage("--window must be at least 1");
    if (o.count > (1ull << 32)) usage("--count must be at most 2^32");
    std::exit(run_backlog(o));
  });
}

}  // namespace carrier::cli::bench
