// carrier bench: runs one load scenario against a STOMP or MQTT broker and reports throughput,
// latency, loss and duplicates. The parts: bench_options (flags, presets), bench_worker
// (producer and consumer loops) with bench_stomp_worker / bench_mqtt_worker, bench_ledger
// (stamps, loss and duplicate accounting), bench_histogram (latency), bench_report (output).

#include "cli/bench.hpp"

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <random>
#include <thread>

#include "cli/bench_backlog.hpp"
#include "cli/bench_destinations.hpp"
#include "cli/bench_fanout.hpp"
#include "cli/bench_selector_backlog.hpp"
#include "cli/bench_footprint.hpp"
#include "cli/bench_options.hpp"
#include "cli/bench_report.hpp"
#include "cli/bench_worker.hpp"
#include "cli/commands.hpp"
#include "cli/tls_flags.hpp"

namespace carrier::cli {

namespace {

using namespace bench;

// Set by SIGINT; the run stops producing, drains and reports. A second SIGINT kills (the
// handler is reset after the first). The one piece of global state: a signal handler has no
// other way to talk.
std::atomic<bool> interrupted{false};

extern "C" void on_sigint(int) { interrupted.store(true); }

double seconds_since(std::uint64_t start_ns, std::uint64_t ns) {
  return ns > start_ns ? static_cast<double>(ns - start_ns) / 1e9 : 0.0;
}

std::uint32_t random_run_id() {
  std::random_device device;
  std::uint32_t id = 0;
  while (id == 0) id = device();
  return id;
}

struct Workers {
  std::vector<std::unique_ptr<Producer>> producers;
  std::vector<std::unique_ptr<Consumer>> consumers;

  std::uint64_t sent() const {
    std::uint64_t n = 0;
    for (const auto& p : producers) n += p->sent();
    return n;
  }
  std::uint64_t confirmed() const {
    std::uint64_t n = 0;
    for (const auto& p : producers) n += p->confirmed();
    return n;
  }
  std::uint64_t received() const {
    std::uint64_t n = 0;
    for (const auto& c : consumers) n += c->received();
    return n;
  }
};

// One progress line a second on stderr until `done`.
void progress_loop(const RunControl& control, const Workers& workers, const std::atomic<bool>& done) {
  std::uint64_t last_sent = 0, last_received = 0;
  auto next = Clock::now() + std::chrono::seconds(1);
  int second = 0;
  while (!done.load()) {
    std::this_thread::sleep_until(std::min(next, Clock::now() + std::chrono::milliseconds(50)));
    if (Clock::now() < next) continue;
    next += std::chrono::seconds(1);
    ++second;
    const std::uint64_t sent = workers.sent(), received = workers.received(), confirmed = workers.confirmed();
    std::fprintf(stderr, "[%3ds] sent %llu (%s/s)  confirmed %llu  received %llu (%s/s)\n", second,
                 static_cast<unsigned long long>(sent), human_rate(static_cast<double>(sent - last_sent)).c_str(),
                 static_cast<unsigned long long>(confirmed), static_cast<unsigned long long>(received),
                 human_rate(static_cast<double>(received - last_received)).c_str());
    last_sent = sent;
    last_received = received;
  }
}

// Each connection is a descriptor (a fan-out to 10,000 subscribers is 10,000 of them): the soft
// limit (often 1024) rises to the hard one.
void raise_open_files_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  (void)::setrlimit(RLIMIT_NOFILE, &limit);
}

int run_bench(const Options& o) {
  raise_open_files_limit();
  RunControl control(o);
  Workers w;
  const bool stomp = o.protocol == Protocol::stomp;
  const bool http = o.protocol == Protocol::http;

  // Consumers first, each subscribed (receipt / SUBACK) before anything is sent: a topic
  // subscriber that joins late would miss messages and count them as lost.
  for (unsigned i = 0; i < o.consumers; ++i) {
    w.consumers.push_back(stomp ? make_stomp_consumer(control, i)
                          : http  ? make_http_consumer(control, i)
                                  : make_mqtt_consumer(control, i));
    if (auto s = w.consumers.back()->start(); !s) {
      std::fprintf(stderr, "carrier bench: consumer %u: %s\n", i, s.error().to_string().c_str());
      return kExitFailure;
    }
  }
  for (unsigned i = 0; i < o.producers; ++i) {
    std::uint64_t quota = 0;
    if (o.count > 0) quota = o.count / o.producers + (i < o.count % o.producers ? 1 : 0);
    w.producers.push_back(stomp ? make_stomp_producer(control, i, quota)
                          : http  ? make_http_producer(control, i, quota)
                                  : make_mqtt_producer(control, i, quota));
    if (auto s = w.producers.back()->connect(); !s) {
      std::fprintf(stderr, "carrier bench: producer %u: %s\n", i, s.error().to_string().c_str());
      return kExitFailure;
    }
  }

  interrupted.store(false);
  struct sigaction action {};
  action.sa_handler = on_sigint;
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);

  const std::uint64_t start = now_ns();
  control.set_start(start);
  std::atomic<bool> done{false};
  std::thread progress;
  if (!o.quiet) progress = std::thread(progress_loop, std::cref(control), std::cref(w), std::cref(done));
  std::vector<std::thread> threads;
  for (auto& p : w.producers) threads.emplace_back([&p] { p->run(); });
  // Producers stop by themselves (quota or duration); the main thread relays a Ctrl-C.
  std::atomic<unsigned> running{static_cast<unsigned>(threads.size())};
  std::thread watcher([&] {
    while (running.load() > 0) {
      if (interrupted.load()) control.request_stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  for (auto& t : threads) {
    t.join();
    running.fetch_sub(1);
  }
  watcher.join();

  // Drain: wait for every expected delivery, or until none arrived for --drain-timeout.
  const std::uint64_t sent = w.sent();
  const std::uint64_t expected = o.kind == Kind::topic ? sent * o.consumers : (o.consumers > 0 ? sent : 0);
  // Bounded twice: a broker that stops delivering, and one that delivers a trickle.
  std::uint64_t seen = w.received();
  const auto drain_start = Clock::now();
  auto last_progress = drain_start;
  const auto drain_timeout = std::chrono::duration<double>(o.drain_timeout_s);
  const auto drain_limit = std::chrono::duration<double>(o.drain_limit_s);
  auto seconds_text = [](double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", s);
    return std::string(text);
  };
  while (seen < expected && !interrupted.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::uint64_t now_seen = w.received();
    const auto now = Clock::now();
    if (now_seen != seen) {
      seen = now_seen;
      last_progress = now;
    }
    const bool stalled = now - last_progress > drain_timeout;
    if (stalled || now - drain_start > drain_limit) {
      control.error("drain: " +
                    (stalled ? "no delivery for " + seconds_text(o.drain_timeout_s)
                             : "still draining after " + seconds_text(o.drain_limit_s)) +
                    ", " + std::to_string(expected - seen) + " of " + std::to_string(expected) +
                    " deliveries missing");
      break;
    }
  }
  for (auto& c : w.consumers) c->stop();
  const std::uint64_t stopped = now_ns();
  done.store(true);
  if (progress.joinable()) progress.join();
  signal(SIGINT, SIG_DFL);

  Totals t;
  std::vector<Ledger> ledgers;
  std::uint64_t produce_done = start, confirm_done = start, last_delivery = start;
  for (const auto& p : w.producers) {
    t.sent.push_back(p->sent());
    t.confirmed += p->confirmed();
    t.failed += p->failed();
    produce_done = std::max(produce_done, p->produce_done_ns());
    confirm_done = std::max(confirm_done, p->confirm_done_ns());
  }
  t.confirmed_by = w.producers.front()->confirmed_by();
  for (const auto& c : w.consumers) {
    ledgers.push_back(c->ledger());
    t.latency.merge(c->latency());
    t.foreign += c->foreign();
    last_delivery = std::max(last_delivery, c->last_delivery_ns());
  }
  t.accounting = account(o.kind, ledgers, t.sent);
  t.produce_s = seconds_since(start, produce_done);
  t.confirm_s = seconds_since(start, confirm_done);
  t.consume_s = seconds_since(start, last_delivery);
  t.elapsed_s = seconds_since(start, stopped);
  t.errors = control.errors();
  if (interrupted.load()) t.errors.insert(t.errors.begin(), "interrupted (SIGINT): stopped early");

  const Report report = make_report(o, t);
  if (o.json) {
    std::cout << to_json(report).dump() << std::endl;
  } else {
    std::cout << to_text(report) << std::flush;
  }
  return report.passed() ? kExitOk : kExitFailure;
}

int run_command(const RawOptions& raw) {
  auto options = resolve(raw, random_run_id());
  if (!options) {
    std::fprintf(stderr, "carrier bench: %s\n", options.error().detail.c_str());
    return kExitUsage;
  }
  if (!raw.allow_remote && (!is_loopback(options->host) || !is_loopback(options->consumer_host))) {
    std::fprintf(stderr,
                 "carrier bench: --server %s is not a loopback address; a load test against another machine "
                 "needs --allow-remote\n",
                 options->server().c_str());
    return kExitUsage;
  }
  return run_bench(*options);
}

std::string preset_help() {
  std::string text = "Scenario preset (flags given with it override it):";
  for (const auto& p : presets()) text += "\n  " + std::string(p.name) + ": " + std::string(p.summary);
  return text;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto raw = std::make_shared<RawOptions>();
  auto* cmd = app.add_subcommand("bench", "Load-test a STOMP or MQTT broker (throughput, latency, loss)");
  cmd->add_option("--preset", raw->preset, preset_help());
  cmd->add_option("--protocol", raw->protocol, "stomp | mqtt | http | ws-stomp | ws-mqtt (ws-*: over the HTTP listener's /ws, default port 8080); default stomp");
  cmd->add_option("--server", raw->server,
                  "Broker HOST:PORT (default 127.0.0.1:61613 for STOMP, 127.0.0.1:1883 for MQTT)");
  cmd->add_option("--consumer-server", raw->consumer_server,
                  "Where the consumers connect, HOST:PORT (default: --server); e.g. the far node of a federation");
  cmd->add_option("--producers", raw->producers, "Producing connections (default 1)");
  cmd->add_option("--consumers", raw->consumers, "Consuming connections, one subscription each (default 1)");
  auto* count = cmd->add_option("--count", raw->count, "Messages to send in total over all producers");
  auto* duration = cmd->add_option("--duration", raw->duration_s, "Seconds to send for (default 10)");
  count->excludes(duration);
  cmd->add_option("--size", raw->size, "Body bytes, the 32-byte stamp included (default 1024)");
  cmd->add_option("--dest", raw->dest,
                  "Destination: STOMP /queue/NAME, /topic/NAME or a NAME for --kind; MQTT topic (default: a "
                  "fresh carrier-bench-<run> name)");
  cmd->add_option("--kind", raw->kind, "queue | topic (default queue; MQTT queue = shared subscription)");
  cmd->add_flag("--persistent", raw->persistent, "STOMP persistent:true");
  cmd->add_option("--receipts", raw->receipts,
                  "Confirmed sends in flight: STOMP receipts; MQTT QoS 1/2 packet ids (default 0 / 1000)");
  cmd->add_option("--ack", raw->ack, "STOMP ack mode: auto | client | client-individual (default auto)");
  cmd->add_option("--prefetch", raw->prefetch, "STOMP subscription prefetch (default: the broker's)");
  cmd->add_option("--qos", raw->qos, "MQTT QoS 0 | 1 | 2 (default 0)");
  cmd->add_option("--mqtt-version", raw->mqtt_version, "3.1.1 | 5 (default 3.1.1)");
  cmd->add_option("--rate", raw->rate, "Offered msg/s over all producers (default: as fast as possible)");
  cmd->add_option("--drain-timeout", raw->drain_timeout_s,
                  "After sending, give up after this many seconds without a delivery (default 10)");
  cmd->add_option("--drain-limit", raw->drain_limit_s,
                  "After sending, give up after this many seconds of draining in all (default 60)");
  cmd->add_option("--login", raw->login, "STOMP login / MQTT user name");
  cmd->add_option("--passcode", raw->passcode, "STOMP passcode / MQTT password");
  add_tls_flags(cmd, raw->tls);
  cmd->add_option("--vhost", raw->vhost, "STOMP CONNECT host header (RabbitMQ: the virtual host, e.g. /)");
  cmd->add_flag("--allow-remote", raw->allow_remote, "Allow a --server that is not a loopback address");
  cmd->add_flag("--json", raw->json, "Print the result as one JSON object on stdout");
  cmd->add_flag("-q,--quiet", raw->quiet, "No progress lines on stderr");
  cmd->callback([raw] { std::exit(run_command(*raw)); });
  add_footprint_command(*cmd);
  add_destinations_command(*cmd);
  add_fanout_command(*cmd);
  add_selector_backlog_command(*cmd);
  add_backlog_command(*cmd);
}

}  // namespace carrier::cli
