#include "cli/bench_fanout.hpp"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "cli/bench_footprint.hpp"
#include "cli/bench_process.hpp"
#include "cli/bench_client_flags.hpp"
#include "cli/commands.hpp"

namespace carrier::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kReplyTimeout = std::chrono::seconds(30);

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

nlohmann::json or_null(std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

void put_string(std::string& out, std::string_view s) {
  out.push_back(static_cast<char>(s.size() >> 8));
  out.push_back(static_cast<char>(s.size() & 0xff));
  out.append(s);
}

void put_length(std::string& out, std::size_t n) {
  do {
    unsigned char b = n % 128;
    n /= 128;
    if (n > 0) b |= 0x80;
    out.push_back(static_cast<char>(b));
  } while (n > 0);
}

std::string mqtt_packet(unsigned char first, const std::string& body) {
  std::string p(1, static_cast<char>(first));
  put_length(p, body.size());
  return p + body;
}

// Reads on a blocking socket until `done(buffer)` says the reply is complete; false on timeout or close.
template <typename Done>
bool read_until(int fd, std::string& in, Done done) {
  timeval tv{static_cast<time_t>(kReplyTimeout.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[4096];
  while (!done(in)) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    in.append(buf, static_cast<std::size_t>(n));
  }
  return true;
}

// Counts MQTT PUBLISH packets in a byte stream that may split them anywhere.
struct MqttCounter {
  std::string partial;
  std::uint64_t feed(const char* data, std::size_t n) {
    partial.append(data, n);
    std::uint64_t publishes = 0;
    std::size_t at = 0;
    for (;;) {
      if (partial.size() - at < 2) break;
      std::size_t length = 0, shift = 0, i = at + 1;
      bool complete = false;
      for (; i < partial.size() && i < at + 5; ++i) {
        const auto b = static_cast<unsigned char>(partial[i]);
        length |= static_cast<std::size_t>(b & 0x7f) << shift;
        shift += 7;
        if ((b & 0x80) == 0) {
          complete = true;
          ++i;
          break;
        }
      }
      if (!complete || partial.size() - i < length) break;
      if ((static_cast<unsigned char>(partial[at]) >> 4) == 3) ++publishes;
      at = i + length;
    }
    partial.erase(0, at);
    return publishes;
  }
};

class Fanout {
 public:
  explicit Fanout(const FanoutOptions& o) : o_(o) {}
  ~Fanout() {
    for (int fd : fds_) ::close(fd);
  }
  int run();

 private:
  void progress(const std::string& line) const {
    if (!o_.quiet) std::fprintf(stderr, "[fanout] %s\n", line.c_str());
  }
  std::string hello(const std::string& client_id) const {
    if (o_.protocol == Protocol::stomp) return connect_request(Protocol::stomp, o_.vhost, o_.login, o_.passcode, client_id);
    return connect_request(Protocol::mqtt, o_.vhost, o_.login, o_.passcode, client_id);
  }
  bool subscribe_all();
  void publish();

  FanoutOptions o_;
  FanoutResult r_;
  Address address_;
  std::vector<int> fds_;
  std::atomic<bool> publishing_done_{false};
  std::atomic<std::uint64_t> published_{0};  // written by the publisher thread
  Clock::time_point first_send_;
  Clock::time_point last_confirm_;
};

bool Fanout::subscribe_all() {
  const auto started = Clock::now();
  const bool stomp = o_.protocol == Protocol::stomp;
  for (unsigned i = 0; i < o_.subscribers; ++i) {
    const int fd = connect_to(address_);
    if (fd < 0) {
      r_.errors.push_back(fmt::format("subscriber {}: {}{}", i + 1, std::strerror(errno),
                                      errno == EMFILE ? " (the open files limit, ulimit -n)" : ""));
      return false;
    }
    fds_.push_back(fd);
    const std::string id = fmt::format("fanout-{}-{}", ::getpid(), i);
    std::string out = hello(id);
    if (stomp) {
      out += stomp_frame("SUBSCRIBE", {{"destination", "/topic/" + o_.topic}, {"id", "0"}, {"ack", "auto"},
                                       {"receipt", "s"}});
    } else {
      std::string body;
      body.push_back(0);
      body.push_back(1);  // packet id 1
      put_string(body, o_.topic);
      body.push_back(0);  // QoS 0
      out += mqtt_packet(0x82, body);
    }
    if (!write_all(fd, out)) {
      r_.errors.push_back(fmt::format("subscriber {}: write: {}", i + 1, std::strerror(errno)));
      return false;
    }
    std::string in;
    const bool ok = read_until(fd, in, [stomp](const std::string& b) {
      if (stomp) return b.find("RECEIPT") != std::string::npos && b.find('\0', b.find("RECEIPT")) != std::string::npos;
      return b.size() >= 4 + 5 && static_cast<unsigned char>(b[4]) == 0x90;  // CONNACK (4) + SUBACK (5)
    });
    if (!ok || (stomp && in.find("CONNECTED") == std::string::npos)) {
      r_.errors.push_back(fmt::format("subscriber {}: no {} (got {} byte(s))", i + 1,
                                      stomp ? "CONNECTED and RECEIPT" : "CONNACK and SUBACK", in.size()));
      return false;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    if ((i + 1) % 1000 == 0) progress(fmt::format("{} of {} subscribed", i + 1, o_.subscribers));
  }
  r_.subscribe_s = seconds_between(started, Clock::now());
  progress(fmt::format("{} subscribed in {:.2f} s", o_.subscribers, r_.subscribe_s));
  return true;
}

// Runs on its own thread: sends every message, then waits for the broker to have read them all.
void Fanout::publish() {
  const bool stomp = o_.protocol == Protocol::stomp;
  const int fd = connect_to(address_);
  std::string in;
  if (fd < 0 || !write_all(fd, hello(fmt::format("fanout-pub-{}", ::getpid()))) ||
      !read_until(fd, in, [&](const std::string& b) {
        return stomp ? b.find('\0') != std::string::npos : b.size() >= 4;
      })) {
    r_.errors.push_back("publisher: cannot connect");
    publishing_done_.store(true);
    if (fd >= 0) ::close(fd);
    return;
  }
  const std::string body(o_.size, 'f');
  std::string message;
  if (stomp) {
    message = stomp_frame("SEND", {{"destination", "/topic/" + o_.topic}}, body);
  } else {
    std::string p;
    put_string(p, o_.topic);
    message = mqtt_packet(0x30, p + body);
  }
  std::string batch;
  // Paced, a batch goes every 10 ms or so, each at the time its first message is due.
  const std::uint64_t per_write =
      o_.rate > 0 ? std::clamp<std::uint64_t>(static_cast<std::uint64_t>(o_.rate / 100), 1, 64) : 64;
  first_send_ = Clock::now();
  for (std::uint64_t i = 0; i < o_.count; i += per_write) {
    if (o_.rate > 0) {
      std::this_thread::sleep_until(first_send_ + std::chrono::duration_cast<Clock::duration>(
                                                      std::chrono::duration<double>(static_cast<double>(i) / o_.rate)));
    }
    batch.clear();
    for (std::uint64_t k = i; k < std::min(o_.count, i + per_write); ++k) batch += message;
    if (!write_all(fd, batch)) {
      r_.errors.push_back(fmt::format("publisher: write: {}", std::strerror(errno)));
      break;
    }
    published_.store(std::min(o_.count, i + per_write), std::memory_order_relaxed);
  }
  // The broker read everything once it answers what was sent after it.
  in.clear();
  if (stomp) {
    (void)write_all(fd, stomp_frame("DISCONNECT", {{"receipt", "end"}}));
    (void)read_until(fd, in, [](const std::string& b) { return b.find("RECEIPT") != std::string::npos; });
  } else {
    (void)write_all(fd, std::string("\xc0\x00", 2));  // PINGREQ
    (void)read_until(fd, in, [](const std::string& b) { return b.find('\xd0') != std::string::npos; });
  }
  last_confirm_ = Clock::now();
  ::close(fd);
  publishing_done_.store(true);
}

int Fanout::run() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &limit);
  }
  r_.protocol = std::string(to_string(o_.protocol));
  r_.server = fmt::format("{}:{}", o_.host, o_.port);
  r_.subscribers = o_.subscribers;
  const auto a = resolve_address(o_.host, o_.port);
  if (!a) {
    std::fprintf(stderr, "carrier bench fanout: cannot resolve %s\n", o_.host.c_str());
    return kExitUsage;
  }
  address_ = *a;
  if (subscribe_all()) {
    const int ep = ::epoll_create1(EPOLL_CLOEXEC);
    std::vector<MqttCounter> counters(o_.protocol == Protocol::mqtt ? fds_.size() : 0);
    for (std::size_t i = 0; i < fds_.size(); ++i) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u64 = i;
      ::epoll_ctl(ep, EPOLL_CTL_ADD, fds_[i], &ev);
    }
    const auto usage_before = o_.pid ? read_process_usage(*o_.pid) : std::nullopt;
    r_.expected = static_cast<std::uint64_t>(o_.subscribers) * o_.count;
    std::thread publisher([this] { publish(); });
    auto last_delivery = Clock::now();
    auto last_report = Clock::now();
    std::vector<epoll_event> events(1024);
    std::vector<char> buf(256 * 1024);
    while (r_.received < r_.expected) {
      const int k = ::epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
      if (k < 0 && errno != EINTR) break;
      for (int e = 0; e < k; ++e) {
        const auto i = events[static_cast<std::size_t>(e)].data.u64;
        for (;;) {
          const ssize_t n = ::recv(fds_[i], buf.data(), buf.size(), 0);
          if (n <= 0) break;
          if (o_.protocol == Protocol::stomp) {
            for (ssize_t b = 0; b < n; ++b) r_.received += buf[static_cast<std::size_t>(b)] == '\0';
          } else {
            r_.received += counters[i].feed(buf.data(), static_cast<std::size_t>(n));
          }
          last_delivery = Clock::now();
        }
      }
      if (Clock::now() - last_report > std::chrono::seconds(1)) {
        last_report = Clock::now();
        progress(fmt::format("published {} of {}, delivered {} of {}", published_.load(), o_.count, r_.received,
                             r_.expected));
      }
      if (publishing_done_.load() &&
          Clock::now() - last_delivery > std::chrono::duration<double>(o_.drain_timeout_s)) {
        r_.errors.push_back(fmt::format("{} deliveries missing after {:g} s without one", r_.expected - r_.received,
                                        o_.drain_timeout_s));
        break;
      }
    }
    publisher.join();
    r_.published = published_.load();
    r_.deliver_s = seconds_between(first_send_, last_delivery);
    r_.publish_s = seconds_between(first_send_, last_confirm_);
    if (usage_before) {
      if (const auto after = read_process_usage(*o_.pid)) r_.broker = *after - *usage_before;
    }
    ::close(ep);
  }
  if (o_.json) {
    std::cout << to_json(r_).dump() << std::endl;
  } else {
    std::cout << to_text(r_) << std::flush;
  }
  return r_.errors.empty() ? kExitOk : kExitFailure;
}

}  // namespace

nlohmann::json to_json(const FanoutResult& r) {
  nlohmann::json j{{"mode", "fanout"},
                   {"protocol", r.protocol},
                   {"server", r.server},
                   {"subscribers", r.subscribers},
                   {"published", r.published},
                   {"expected", r.expected},
                   {"received", r.received},
                   {"subscribe_s", r.subscribe_s},
                   {"publish_s", r.publish_s},
                   {"deliver_s", r.deliver_s},
                   {"deliveries_per_s", r.deliveries_per_s()},
                   {"broker_cpu_s", or_null(r.broker_cpu_s())},
                   {"broker_cpu_ns_per_delivery", or_null(r.cpu_ns_per_delivery())},
                   {"broker_user_ns_per_delivery", or_null(r.per_delivery_ns(&ProcessUsage::user_s))},
                   {"broker_system_ns_per_delivery", or_null(r.per_delivery_ns(&ProcessUsage::system_s))},
                   {"broker_page_faults", r.broker ? nlohmann::json(r.broker->minor_faults) : nlohmann::json(nullptr)},
                   {"errors", r.errors},
                   {"ok", r.errors.empty() && r.received == r.expected}};
  return j;
}

std::string to_text(const FanoutResult& r) {
  std::string s = fmt::format("carrier bench fanout ({} on {})\n", r.protocol, r.server);
  s += fmt::format("  {} subscribers, {} published, {} of {} deliveries\n", r.subscribers, r.published, r.received,
                   r.expected);
  s += fmt::format("  subscribed in {:.2f} s; published in {:.2f} s; delivered in {:.2f} s: {:.0f} deliveries/s\n",
                   r.subscribe_s, r.publish_s, r.deliver_s, r.deliveries_per_s());
  if (const auto ns = r.cpu_ns_per_delivery()) {
    s += fmt::format("  broker CPU {:.2f} s: {:.0f} ns per delivery ({:.0f} user, {:.0f} system), {} page faults\n",
                     *r.broker_cpu_s(), *ns, *r.per_delivery_ns(&ProcessUsage::user_s),
                     *r.per_delivery_ns(&ProcessUsage::system_s), r.broker->minor_faults);
  }
  for (const auto& e : r.errors) s += "  error: " + e + "\n";
  return s;
}

int run_fanout(const FanoutOptions& options) {
  Fanout f(options);
  return f.run();
}

void add_fanout_command(CLI::App& bench) {
  struct Raw {
    FanoutOptions o;
    std::string protocol = "stomp";
    std::string server;
    int pid = 0;
  };
  auto raw = std::make_shared<Raw>();
  auto* cmd = bench.add_subcommand("fanout", "Topic fan-out to many subscribers: deliveries/s and broker CPU per delivery");
  cmd->add_option("--server", raw->server, "The broker, HOST:PORT (default 127.0.0.1:61613, MQTT :1883)");
  cmd->add_option("--protocol", raw->protocol, "stomp | mqtt (QoS 0)");
  cmd->add_option("--subscribers", raw->o.subscribers, "Subscriber connections (default 10000)");
  cmd->add_option("--count", raw->o.count, "Messages published (default 100)");
  cmd->add_option("--size", raw->o.size, "Body bytes (default 256)");
  cmd->add_option("--rate", raw->o.rate,
                  "Messages published per second (default 0: as fast as the broker reads them); "
                  "a rate the subscribers keep up with measures delivery without a backlog");
  cmd->add_option("--topic", raw->o.topic, "Topic name, without /topic/ (default bench.fanout)");
  cmd->add_option("--pid", raw->pid, "The broker's process id: its CPU time per delivery is reported");
  cmd->add_option("--drain-timeout", raw->o.drain_timeout_s, "Give up after this long without a delivery (10 s)");
  add_bench_client_flags(*cmd, raw->o.login, raw->o.passcode, raw->o.vhost, raw->o.json, raw->o.quiet, true);
  cmd->callback([raw] {
    FanoutOptions o = raw->o;
    auto usage = [](const std::string& message) {
      std::fprintf(stderr, "carrier bench fanout: %s\n", message.c_str());
      std::exit(kExitUsage);
    };
    if (raw->protocol == "stomp") {
      o.protocol = Protocol::stomp;
    } else if (raw->protocol == "mqtt") {
      o.protocol = Protocol::mqtt;
      o.port = 1883;
    } else {
      usage("--protocol must be stomp or mqtt");
    }
    if (!raw->server.empty()) {
      const auto server = split_host_port(raw->server);
      if (!server) usage("--server must be HOST:PORT");
      o.host = server->first;
      o.port = server->second;
    }
    if (raw->pid > 0) o.pid = raw->pid;
    if (o.subscribers == 0 || o.count == 0) usage("--subscribers and --count must be at least 1");
    if (!(o.rate >= 0 && o.rate <= 1e9)) usage("--rate must be between 0 and 1e9");
    if (!is_loopback(o.host)) usage("--server must be a loopback address");
    if (o.vhost.empty()) o.vhost = o.host;
    std::exit(run_fanout(o));
  });
}

}  // namespace carrier::cli::bench
