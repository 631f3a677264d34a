// The footprint runner: starts the broker (or finds it by --pid), times exec -> first
// handshake, reads /proc/<pid>/status of the broker's process tree, opens the idle connections
// with plain non-blocking sockets on one thread (one client thread per connection, as the load
// workers use, would not scale to 10,000), and stops what it started.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli/bench_footprint.hpp"
#include "cli/bench_process.hpp"
#include "cli/commands.hpp"

namespace carrier::cli::bench {

namespace {

using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

// Between connect attempts while the broker starts: short, so it adds at most this much to
// the start time measured.
constexpr auto kRetryInterval = std::chrono::milliseconds(1);
// Handshakes in flight while opening the connections: well below the listen backlog, so no
// SYN is dropped (a dropped SYN costs a 1 s retransmission and would distort connect_s).
constexpr unsigned kWindow = 256;
// No handshake completed for this long: the broker is stuck or refusing.
constexpr auto kStallTimeout = std::chrono::seconds(30);
// Descriptors this process needs beyond the connections (stdio, epoll, probe, /proc reads).
constexpr rlim_t kSpareDescriptors = 64;

std::optional<std::uint64_t> open_files_limit(int pid) {
  const auto text = read_text(fmt::format("/proc/{}/limits", pid));
  if (!text) return std::nullopt;
  const auto at = text->find("Max open files");
  if (at == std::string::npos) return std::nullopt;
  std::istringstream line(text->substr(at + 14));
  std::string soft;
  line >> soft;
  if (soft == "unlimited") return UINT64_MAX;
  try {
    return std::stoull(soft);
  } catch (...) {
    return std::nullopt;
  }
}

// One handshake on a blocking socket, bounded by `timeout`.
HandshakeReply handshake(int fd, const FootprintOptions& o, const std::string& client_id,
                         std::chrono::milliseconds timeout) {
  HandshakeReply reply;
  timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>((timeout.count() % 1000) * 1000)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (!write_all(fd, connect_request(o.protocol, o.vhost, o.login, o.passcode, client_id))) {
    reply.state = HandshakeReply::State::refused;
    reply.reason = std::string("write failed: ") + std::strerror(errno);
    return reply;
  }
  std::string in;
  char buf[4096];
  while (reply.state == HandshakeReply::State::need_more) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reply.state = HandshakeReply::State::refused;
      reply.reason = n == 0 ? "closed by the broker" : std::string("read failed: ") + std::strerror(errno);
      return reply;
    }
    in.append(buf, static_cast<std::size_t>(n));
    reply = parse_handshake_reply(o.protocol, in);
  }
  return reply;
}

class Footprint {
 public:
  explicit Footprint(const FootprintOptions& o) : o_(o) {}
  ~Footprint() { cleanup(); }

  int run();

 private:
  bool start_broker();
  bool wait_until_ready();
  void open_connections();
  void close_connections();
  void settle() const { std::this_thread::sleep_for(std::chrono::duration<double>(o_.settle_s)); }
  bool alive();
  void stop_broker();
  void cleanup();
  void progress(const std::string& line) const {
    if (!o_.quiet) std::fprintf(stderr, "[footprint] %s\n", line.c_str());
  }

  FootprintOptions o_;
  FootprintResult r_;
  Address address_;
  fs::path workdir_;
  fs::path broker_log_;
  pid_t child_ = -1;
  Clock::time_point start_;
  std::vector<int> fds_;
};

int Footprint::run() {
  r_.protocol = o_.protocol;
  r_.connections_requested = o_.connections;

  // Each connection is a descriptor here (and in the broker, which inherits this limit when we
  // start it).
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  const rlim_t needed = o_.connections + kSpareDescriptors;
  if (limit.rlim_cur < needed) {
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed) {
      std::fprintf(stderr,
                   "carrier bench footprint: %u connections need %llu open files, but the hard limit "
                   "(ulimit -Hn) is %llu: raise it or use --connections %llu or fewer\n",
                   o_.connections, static_cast<unsigned long long>(needed),
                   static_cast<unsigned long long>(limit.rlim_max),
                   static_cast<unsigned long long>(limit.rlim_max > kSpareDescriptors ? limit.rlim_max - kSpareDescriptors : 0));
      return kExitUsage;
    }
    limit.rlim_cur = needed;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) {
      std::fprintf(stderr, "carrier bench footprint: cannot raise the open files limit to %llu: %s\n",
                   static_cast<unsigned long long>(needed), std::strerror(errno));
      return kExitFailure;
    }
  }

  if (o_.pid) {
    r_.pid = *o_.pid;
    if (::kill(r_.pid, 0) != 0 && errno == ESRCH) {
      std::fprintf(stderr, "carrier bench footprint: no process %d\n", r_.pid);
      return kExitUsage;
    }
    if (const auto broker_limit = open_files_limit(r_.pid); broker_limit && *broker_limit < o_.connections + 16) {
      progress(fmt::format("warning: process {} may open only {} files; {} connections will likely fail", r_.pid,
                           *broker_limit, o_.connections));
    }
  } else if (!start_broker()) {
    r_.errors.push_back("the broker did not start");
  }
  r_.server = fmt::format("{}:{}", o_.host, o_.port);

  if (r_.errors.empty() && o_.pid) {
    const auto a = resolve_address(o_.host, o_.port);
    if (!a) {
      r_.errors.push_back("cannot resolve " + o_.host);
    } else {
      address_ = *a;
    }
  }
  if (r_.errors.empty() && !o_.pid) wait_until_ready();
  if (r_.errors.empty()) {
    settle();
    r_.idle = read_memory(r_.pid);
    if (!r_.idle) r_.errors.push_back(fmt::format("cannot read /proc/{}/status", r_.pid));
  }
  if (r_.errors.empty()) {
    open_connections();
    settle();
    r_.loaded = read_memory(r_.pid);
    close_connections();
    settle();
    r_.closed = read_memory(r_.pid);
  }
  close_connections();
  stop_broker();

  if (o_.json) {
    std::cout << to_json(r_).dump() << std::endl;
  } else {
    std::cout << to_text(r_) << std::flush;
  }
  return r_.complete() ? kExitOk : kExitFailure;
}

bool Footprint::start_broker() {
  char pattern[] = "/tmp/carrier-footprint-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    r_.errors.push_back(std::string("mkdtemp: ") + std::strerror(errno));
    return false;
  }
  workdir_ = pattern;
  broker_log_ = workdir_ / "broker.log";

  std::vector<std::string> argv;
  if (o_.command.empty()) {
    std::error_code ec;
    const auto self = fs::read_symlink("/proc/self/exe", ec);
    if (ec) {
      r_.errors.push_back("cannot find this executable: " + ec.message());
      return false;
    }
    const std::uint16_t stomp = free_port(), mqtt = free_port();
    o_.host = "127.0.0.1";
    o_.port = o_.protocol == Protocol::stomp ? stomp : mqtt;
    if (o_.vhost.empty()) o_.vhost = o_.host;
    argv = {self.string(), "serve", "--stomp", fmt::format("127.0.0.1:{}", stomp), "--mqtt",
            fmt::format("127.0.0.1:{}", mqtt), "--data-dir", (workdir_ / "data").string()};
    for (std::size_t i = 0; i < argv.size(); ++i) r_.command += (i ? " " : "") + argv[i];
  } else {
    // `exec` makes the shell become the broker, so the pid is the broker's.
    argv = {"/bin/sh", "-c", "exec " + o_.command};
    r_.command = o_.command;
  }
  const auto a = resolve_address(o_.host, o_.port);
  if (!a) {
    r_.errors.push_back("cannot resolve " + o_.host);
    return false;
  }
  address_ = *a;

  progress("starting: " + r_.command);
  start_ = Clock::now();
  if (auto error = spawn_in_own_group(argv, broker_log_, LogMode::truncate, child_)) {
    r_.errors.push_back(std::move(*error));
    return false;
  }
  r_.pid = child_;
  return true;
}

bool Footprint::alive() {
  if (child_ < 0) return r_.pid > 0 && (::kill(r_.pid, 0) == 0 || errno != ESRCH);
  int status = 0;
  if (::waitpid(child_, &status, WNOHANG) == child_) {
    child_ = -1;
    return false;
  }
  return true;
}

bool Footprint::wait_until_ready() {
  const auto deadline = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.start_timeout_s));
  for (;;) {
    if (!alive()) {
      r_.errors.push_back("the broker exited during start-up" + log_tail(broker_log_));
      return false;
    }
    if (Clock::now() > deadline) {
      r_.errors.push_back(fmt::format("not accepting on {} after {:g} s", r_.server, o_.start_timeout_s));
      return false;
    }
    const int fd = connect_to(address_);
    if (fd < 0) {
      std::this_thread::sleep_for(kRetryInterval);
      continue;
    }
    r_.listen_ms = ms_since(start_);
    const auto reply = handshake(fd, o_, "carrier-footprint-probe", std::chrono::milliseconds(10000));
    ::close(fd);
    if (reply.state != HandshakeReply::State::connected) {
      r_.errors.push_back("first connection refused: " + reply.reason);
      return false;
    }
    r_.start_ms = ms_since(start_);
    progress(fmt::format("accepting after {:.1f} ms, {} after {:.1f} ms", *r_.listen_ms,
                         o_.protocol == Protocol::stomp ? "CONNECTED" : "CONNACK", *r_.start_ms));
    return true;
  }
}

void Footprint::open_connections() {
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) {
    r_.errors.push_back(std::string("epoll_create1: ") + std::strerror(errno));
    return;
  }
  const auto started = Clock::now();
  std::vector<std::string> in(o_.connections);
  fds_.assign(o_.connections, -1);
  unsigned next = 0, pending = 0, reported = 0;
  auto last_progress = Clock::now();
  std::string error;
  while (r_.connections < o_.connections && error.empty()) {
    while (next < o_.connections && pending < kWindow) {
      const int fd = connect_to(address_);
      if (fd < 0) {
        error = fmt::format("connection {}: {}", next + 1, std::strerror(errno));
        if (errno == EMFILE || errno == ENFILE) error += " (the open files limit, ulimit -n)";
        break;
      }
      fds_[next] = fd;
      const std::string id = fmt::format("carrier-footprint-{}-{}", ::getpid(), next);
      if (!write_all(fd, connect_request(o_.protocol, o_.vhost, o_.login, o_.passcode, id))) {
        error = fmt::format("connection {}: write failed: {}", next + 1, std::strerror(errno));
        break;
      }
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.u32 = next;
      ::epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
      ++next;
      ++pending;
    }
    if (!error.empty() || pending == 0) break;
    epoll_event events[kWindow];
    const int k = ::epoll_wait(ep, events, kWindow, 1000);
    if (k < 0 && errno != EINTR) {
      error = std::string("epoll_wait: ") + std::strerror(errno);
      break;
    }
    if (k <= 0) {
      if (Clock::now() - last_progress > kStallTimeout) {
        error = fmt::format("no handshake completed for {} s ({} of {} connected)",
                            std::chrono::duration_cast<std::chrono::seconds>(kStallTimeout).count(), r_.connections,
                            o_.connections);
      }
      continue;
    }
    for (int e = 0; e < k && error.empty(); ++e) {
      const unsigned i = events[e].data.u32;
      char buf[1024];
      bool eof = false;
      for (;;) {
        const ssize_t n = ::recv(fds_[i], buf, sizeof buf, 0);
        if (n > 0) {
          in[i].append(buf, static_cast<std::size_t>(n));
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        eof = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
        break;
      }
      const auto reply = parse_handshake_reply(o_.protocol, in[i]);
      if (reply.state == HandshakeReply::State::refused) {
        error = fmt::format("connection {} refused: {}", i + 1, reply.reason);
      } else if (reply.state == HandshakeReply::State::need_more) {
        if (eof) error = fmt::format("connection {} closed by the broker before the handshake", i + 1);
      } else {
        ::epoll_ctl(ep, EPOLL_CTL_DEL, fds_[i], nullptr);
        std::string().swap(in[i]);
        --pending;
        ++r_.connections;
        last_progress = Clock::now();
      }
    }
    if (r_.connections / 1000 != reported) {
      reported = r_.connections / 1000;
      progress(fmt::format("{} of {} connected", r_.connections, o_.connections));
    }
  }
  ::close(ep);
  r_.connect_s = std::chrono::duration<double>(Clock::now() - started).count();
  if (!error.empty()) r_.errors.push_back(error);
  progress(fmt::format("{} of {} connected in {:.2f} s", r_.connections, o_.connections, r_.connect_s));
}

void Footprint::close_connections() {
  for (int& fd : fds_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  fds_.clear();
}

void Footprint::stop_broker() {
  if (child_ < 0) return;
  ::kill(-child_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (Clock::now() < deadline) {
    int status = 0;
    if (::waitpid(child_, &status, WNOHANG) == child_) {
      child_ = -1;
      ::kill(-r_.pid, SIGKILL);  // anything it left behind in its group
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-child_, SIGKILL);
  ::waitpid(child_, nullptr, 0);
  child_ = -1;
  r_.errors.push_back("the broker did not stop within 30 s of SIGTERM: killed");
}

void Footprint::cleanup() {
  close_connections();
  stop_broker();
  if (!workdir_.empty()) {
    std::error_code ec;
    fs::remove_all(workdir_, ec);
    workdir_.clear();
  }
}

}  // namespace

int run_footprint(const FootprintOptions& options) {
  Footprint f(options);
  return f.run();
}

}  // namespace carrier::cli::bench
