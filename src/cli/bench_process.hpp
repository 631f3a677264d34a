#pragma once

// What the broker-measuring bench modes (footprint, destinations) share: reading a process
// tree's memory from /proc, plain blocking loopback sockets, and a broker started as a child
// process (its own process group, output to a log file) that can be stopped and started again.

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/bench_footprint.hpp"

namespace carrier::cli::bench {

double ms_since(std::chrono::steady_clock::time_point start);
std::optional<std::string> read_text(const std::string& path);
// The broker and its descendants (RabbitMQ's start script runs the Erlang VM as a child).
std::vector<int> process_tree(int root);
// CPU time and page faults of one process so far (its /proc/PID/stat), CPU in seconds.
struct ProcessUsage {
  double user_s = 0;
  double system_s = 0;
  std::uint64_t minor_faults = 0;
  ProcessUsage operator-(const ProcessUsage& before) const {
    return {user_s - before.user_s, system_s - before.system_s, minor_faults - before.minor_faults};
  }
};
std::optional<ProcessUsage> read_process_usage(int pid);
// VmRSS and friends summed over process_tree(pid); nullopt if none could be read.
std::optional<MemorySample> read_memory(int pid);
// A free port below the kernel's ephemeral range (bench_process.cpp says why); 0 if none was found.
std::uint16_t free_port();

struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family = AF_INET;
};
// "HOST:PORT" (the last colon splits it; PORT 1 to 65535), or nullopt: the bench modes' --server.
std::optional<std::pair<std::string, std::uint16_t>> split_host_port(std::string_view text);
std::optional<Address> resolve_address(const std::string& host, std::uint16_t port);
// A blocking connect (loopback: it completes or is refused at once). -1 with errno set.
int connect_to(const Address& a);
bool write_all(int fd, std::string_view data);
// The last lines of a broker's output file, for an error message ("; its output ends: ...").
std::string log_tail(const std::filesystem::path& path);

// A STOMP frame: command, headers as given (no escaping: bench names need none), content-length
// when there is a body, NUL.
std::string stomp_frame(std::string_view command, const std::vector<std::pair<std::string, std::string>>& headers,
                        std::string_view body = {});

// One blocking STOMP 1.2 connection (heart-beats off) that writes frames and waits for a RECEIPT
// or a MESSAGE, each wait bounded by `reply_timeout`. Errors are sentences.
// Runs on: the thread that uses it.
class BlockingStomp {
 public:
  explicit BlockingStomp(std::chrono::seconds reply_timeout = std::chrono::seconds(120))
      : reply_timeout_(reply_timeout) {}
  BlockingStomp(const BlockingStomp&) = delete;
  BlockingStomp& operator=(const BlockingStomp&) = delete;
  ~BlockingStomp() { close(); }

  // CONNECT (with `client_id` unless empty) and wait for CONNECTED.
  std::optional<std::string> open(const Address& a, const std::string& vhost, const std::string& login,
                                  const std::string& passcode, const std::string& client_id);
  bool write(std::string_view frames) { return write_all(fd_, frames); }
  // Reads frames until RECEIPT `id`; MESSAGEs on the way are counted in `messages`.
  std::optional<std::string> await_receipt(const std::string& id);
  // Reads frames until a MESSAGE (counted in `messages`).
  std::optional<std::string> await_message();
  void close();
  // The start of the last frame read (its head, and the body's first bytes: 500 in all).
  const std::string& last_frame() const { return last_; }

  std::uint64_t messages = 0;

 private:
  // The next frame's command (and receipt-id); an error on timeout or close.
  std::optional<std::string> next_frame(std::string& command, std::string* receipt_id);

  std::chrono::seconds reply_timeout_;
  int fd_ = -1;
  std::string in_;
  std::string last_;
};

// A broker run as a child: `argv` exec'd in its own process group, stdout and stderr to `log`.
// Runs on: the bench's main thread.
enum class LogMode { append, truncate };

// Starts argv[0] (argv[0] is a path) in a process group of its own, with stdin from /dev/null
// and stdout and stderr into `log`. Sets `pid` (-1 on failure); the error says why not.
std::optional<std::string> spawn_in_own_group(const std::vector<std::string>& argv,
                                              const std::filesystem::path& log, LogMode mode, pid_t& pid);

class BrokerProcess {
 public:
  BrokerProcess() = default;
  BrokerProcess(const BrokerProcess&) = delete;
  BrokerProcess& operator=(const BrokerProcess&) = delete;
  ~BrokerProcess() { (void)stop(); }

  // Starts it; the error says why not.
  std::optional<std::string> start(const std::vector<std::string>& argv, const std::filesystem::path& log);
  // Whether it still runs (reaps it if it exited).
  bool alive();
  // SIGTERM to the group, then SIGKILL after `grace`; false if it had to be killed.
  bool stop(std::chrono::seconds grace = std::chrono::seconds(30));
  // SIGKILL to the group at once (a crash, as far as a journal can tell), and reaps it.
  void kill();
  int pid() const { return pid_; }
  std::chrono::steady_clock::time_point started() const { return started_; }

 private:
  pid_t pid_ = -1;
  std::chrono::steady_clock::time_point started_;
};

// How long a broker took from exec to accepting connections, and to a STOMP CONNECTED.
struct StartTimes {
  double listen_ms = 0;
  double connected_ms = 0;
};

// Waits, up to `timeout_s` from its start, until `broker` accepts on `a` and answers a STOMP
// CONNECT (a broker may accept before it speaks STOMP: RabbitMQ's plugin starts late), and says
// when each happened. The error says why not, with the end of its `log`.
std::optional<std::string> await_stomp_start(BrokerProcess& broker, const Address& a, const std::filesystem::path& log,
                                             const std::string& vhost, const std::string& login,
                                             const std::string& passcode, double timeout_s, StartTimes& times);

}  // namespace carrier::cli::bench
