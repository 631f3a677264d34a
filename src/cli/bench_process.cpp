#include "cli/bench_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <spawn.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace carrier::cli::bench {

namespace fs = std::filesystem;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}


std::vector<int> process_tree(int root) {
  std::multimap<int, int> children;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = read_text(entry.path().string() + "/stat");
    if (!stat) continue;
    if (const auto ppid = parse_stat_ppid(*stat)) children.emplace(*ppid, std::stoi(name));
  }
  std::vector<int> tree{root};
  for (std::size_t i = 0; i < tree.size(); ++i) {
    auto [begin, end] = children.equal_range(tree[i]);
    for (auto it = begin; it != end; ++it) tree.push_back(it->second);
  }
  return tree;
}

std::optional<ProcessUsage> read_process_usage(int pid) {
  const auto text = read_text(fmt::format("/proc/{}/stat", pid));
  if (!text) return std::nullopt;
  const auto t = parse_stat_times(*text);
  if (!t) return std::nullopt;
  const auto tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return ProcessUsage{static_cast<double>(t->user_ticks) / tick, static_cast<double>(t->system_ticks) / tick,
                      t->minor_faults};
}

std::optional<MemorySample> read_memory(int pid) {
  std::optional<MemorySample> total;
  for (int p : process_tree(pid)) {
    const auto text = read_text(fmt::format("/proc/{}/status", p));
    if (!text) continue;
    if (const auto one = parse_proc_status(*text)) {
      if (!total) total = MemorySample{};
      add(*total, *one);
    }
  }
  return total;
}


std::uint16_t free_port() {
  // Below the kernel's ephemeral range: a port from bind(0) comes from the range outgoing
  // connections take their source ports from, so another client could hold it by the time the
  // broker binds it. Below it only another pick can collide; each is random and checked. The
  // top 2,000 ports of it: the integration tests' helper (tests/helpers/broker.py) keeps below
  // them, so a bench run inside a test never takes a port a stopped test broker comes back to.
  unsigned low = 32768;
  if (auto range = read_text("/proc/sys/net/ipv4/ip_local_port_range")) {
    unsigned parsed = 0;
    const char* begin = range->data();
    while (begin < range->data() + range->size() && (*begin == ' ' || *begin == '\t')) ++begin;
    if (std::from_chars(begin, range->data() + range->size(), parsed).ec == std::errc() && parsed > 2000) low = parsed;
  }
  const unsigned first = low > 3024 ? low - 2000 : 1024;
  std::random_device seed;
  std::mt19937 pick(seed());
  std::uniform_int_distribution<unsigned> in_range(first, low - 1);
  for (int attempt = 0; attempt < 1000; ++attempt) {
    const auto port = static_cast<std::uint16_t>(in_range(pick));
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(port);
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (bound) return port;
  }
  return 0;
}

std::optional<std::pair<std::string, std::uint16_t>> split_host_port(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  unsigned port = 0;
  const char* end = text.data() + text.size();
  const auto [stop, ec] = std::from_chars(text.data() + colon + 1, end, port);
  if (ec != std::errc() || stop != end || port == 0 || port > 65535) return std::nullopt;
  std::string_view host = text.substr(0, colon);
  // [::1]:61613: the brackets only delimit an IPv6 address.
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  return std::pair<std::string, std::uint16_t>{std::string(host), static_cast<std::uint16_t>(port)};
}

std::optional<Address> resolve_address(const std::string& host, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  Address a;
  std::memcpy(&a.storage, found->ai_addr, found->ai_addrlen);
  a.length = found->ai_addrlen;
  a.family = found->ai_family;
  ::freeaddrinfo(found);
  return a;
}

int connect_to(const Address& a) {
  const int fd = ::socket(a.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a.storage), a.length) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}


std::string log_tail(const fs::path& path) {
  const auto text = read_text(path.string());
  if (!text || text->empty()) return "";
  const std::string& t = *text;
  std::size_t from = t.size() > 2000 ? t.size() - 2000 : 0;
  return "; its output ends: " + t.substr(from);
}

std::string stomp_frame(std::string_view command, const std::vector<std::pair<std::string, std::string>>& headers,
                        std::string_view body) {
  std::string f(command);
  f += '\n';
  for (const auto& [k, v] : headers) f += k + ":" + v + "\n";
  if (!body.empty()) f += "content-length:" + std::to_string(body.size()) + "\n";
  f += '\n';
  f += body;
  f.push_back('\0');
  return f;
}

std::optional<std::string> BlockingStomp::open(const Address& a, const std::string& vhost, const std::string& login,
                                               const std::string& passcode, const std::string& client_id) {
  fd_ = connect_to(a);
  if (fd_ < 0) return std::string("connect: ") + std::strerror(errno);
  std::string f = "CONNECT\naccept-version:1.2\nhost:" + vhost + "\nheart-beat:0,0\n";
  if (!login.empty()) f += "login:" + login + "\npasscode:" + passcode + "\n";
  if (!client_id.empty()) f += "client-id:" + client_id + "\n";
  f += "\n";
  f.push_back('\0');
  if (!write_all(fd_, f)) return std::string("write: ") + std::strerror(errno);
  std::string command;
  if (auto e = next_frame(command, nullptr)) return e;
  if (command != "CONNECTED") return "the broker answered CONNECT with " + command + ": " + last_;
  return std::nullopt;
}

std::optional<std::string> BlockingStomp::await_receipt(const std::string& id) {
  for (;;) {
    std::string command, receipt;
    if (auto e = next_frame(command, &receipt)) return e;
    if (command == "RECEIPT" && receipt == id) return std::nullopt;
    if (command == "MESSAGE") {
      ++messages;
      continue;
    }
    if (command == "ERROR") return "ERROR from the broker: " + last_;
  }
}

std::optional<std::string> BlockingStomp::await_message() {
  for (;;) {
    std::string command;
    if (auto e = next_frame(command, nullptr)) return e;
    if (command == "MESSAGE") {
      ++messages;
      return std::nullopt;
    }
    if (command == "ERROR") return "ERROR from the broker: " + last_;
  }
}

void BlockingStomp::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::optional<std::string> BlockingStomp::next_frame(std::string& command, std::string* receipt_id) {
  const auto deadline = std::chrono::steady_clock::now() + reply_timeout_;
  for (;;) {
    while (!in_.empty() && (in_[0] == '\n' || in_[0] == '\r')) in_.erase(0, 1);  // heart-beats
    const auto head_end = in_.find("\n\n");
    if (head_end != std::string::npos) {
      std::size_t body_end = std::string::npos;
      const auto cl = in_.find("\ncontent-length:");
      if (cl != std::string::npos && cl < head_end) {
        std::size_t length = 0;
        const char* from = in_.data() + cl + 16;
        (void)std::from_chars(from, in_.data() + head_end, length);
        if (in_.size() >= head_end + 2 + length + 1) body_end = head_end + 2 + length;
      } else {
        body_end = in_.find('\0', head_end);
      }
      if (body_end != std::string::npos) {
        const std::string head = in_.substr(0, head_end);
        command = head.substr(0, head.find('\n'));
        if (receipt_id != nullptr) {
          const auto r = head.find("\nreceipt-id:");
          *receipt_id = r == std::string::npos ? "" : head.substr(r + 12, head.find('\n', r + 1) - r - 12);
        }
        last_ = in_.substr(0, std::min<std::size_t>(body_end, 500));
        in_.erase(0, body_end + 1);
        return std::nullopt;
      }
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::string("no answer from the broker within the timeout");
    timeval tv{static_cast<time_t>(left.count() / 1000), static_cast<suseconds_t>((left.count() % 1000) * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[65536];
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      return fmt::format("no answer from the broker within {} s", reply_timeout_.count());
    }
    if (n <= 0) return n == 0 ? std::string("closed by the broker") : std::string("read: ") + std::strerror(errno);
    in_.append(buf, static_cast<std::size_t>(n));
  }
}

std::optional<std::string> spawn_in_own_group(const std::vector<std::string>& argv, const fs::path& log,
                                              LogMode mode, pid_t& pid) {
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& s : copy) args.push_back(s.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(),
                                   O_WRONLY | O_CREAT | (mode == LogMode::append ? O_APPEND : O_TRUNC), 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group: stopping it reaches every process it started.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const int rc = ::posix_spawn(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid = -1;
    return fmt::format("cannot start {}: {}", argv[0], std::strerror(rc));
  }
  return std::nullopt;
}

std::optional<std::string> BrokerProcess::start(const std::vector<std::string>& argv, const fs::path& log) {
  started_ = std::chrono::steady_clock::now();
  return spawn_in_own_group(argv, log, LogMode::append, pid_);
}

bool BrokerProcess::alive() {
  if (pid_ < 0) return false;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    ::kill(-pid_, SIGKILL);  // anything it left behind in its group
    pid_ = -1;
    return false;
  }
  return true;
}

bool BrokerProcess::stop(std::chrono::seconds grace) {
  if (pid_ < 0) return true;
  ::kill(-pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!alive()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
  return false;
}

void BrokerProcess::kill() {
  if (pid_ < 0) return;
  ::kill(-pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

std::optional<std::string> await_stomp_start(BrokerProcess& broker, const Address& a, const fs::path& log,
                                             const std::string& vhost, const std::string& login,
                                             const std::string& passcode, double timeout_s, StartTimes& times) {
  const auto deadline = broker.started() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double>(timeout_s));
  for (;;) {
    if (!broker.alive()) return "the broker exited during start-up" + log_tail(log);
    if (std::chrono::steady_clock::now() > deadline) return fmt::format("not accepting after {:g} s", timeout_s);
    const int fd = connect_to(a);
    if (fd < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    ::close(fd);
    break;
  }
  times.listen_ms = ms_since(broker.started());
  BlockingStomp probe;
  for (;;) {
    auto e = probe.open(a, vhost, login, passcode, "");
    if (!e) break;
    if (std::chrono::steady_clock::now() > deadline || !broker.alive()) {
      return "first STOMP connection: " + *e + log_tail(log);
    }
    probe.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  times.connected_ms = ms_since(broker.started());
  return std::nullopt;
}

}  // namespace carrier::cli::bench
