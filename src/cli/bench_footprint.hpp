#pragma once

// carrier bench footprint: how long a broker takes to start, how much memory it holds idle, and
// how much with N idle connections (issue 6's footprint targets). The pure parts (parsing
// /proc/<pid>/status and handshake replies, judging and reporting) are here; the runner, which
// starts the broker and opens the connections, is bench_footprint_run.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_options.hpp"

namespace carrier::cli::bench {

// Memory of one process, or summed over a process and its descendants, in KiB (as the kernel
// reports it in /proc/<pid>/status).
struct MemorySample {
  std::uint64_t rss_kib = 0;    // VmRSS
  std::uint64_t hwm_kib = 0;    // VmHWM: peak RSS so far
  std::uint64_t anon_kib = 0;   // RssAnon: heap, stacks, anonymous mappings
  std::uint64_t file_kib = 0;   // RssFile: the binary, shared libraries, mapped files
  std::uint64_t shmem_kib = 0;  // RssShmem
  unsigned threads = 0;
  unsigned processes = 0;
};

// One /proc/<pid>/status text; nullopt without a VmRSS line (a kernel thread, a zombie).
std::optional<MemorySample> parse_proc_status(std::string_view text);
void add(MemorySample& total, const MemorySample& one);

// The parent pid in one /proc/<pid>/stat text (the command name may hold spaces and parens).
std::optional<int> parse_stat_ppid(std::string_view text);

// What a process has spent so far, from the same text: CPU in clock ticks (utime, stime) and
// minor page faults (minflt; each first touch of a fresh page is one).
struct ProcessTimes {
  std::uint64_t user_ticks = 0;
  std::uint64_t system_ticks = 0;
  std::uint64_t minor_faults = 0;
};
std::optional<ProcessTimes> parse_stat_times(std::string_view text);

// The server's answer to the connect handshake: STOMP CONNECTED or ERROR, MQTT CONNACK.
struct HandshakeReply {
  enum class State { need_more, connected, refused } state = State::need_more;
  std::string reason;  // for refused
};
HandshakeReply parse_handshake_reply(Protocol protocol, std::string_view bytes);

// STOMP CONNECT (1.2, heart-beat 0,0) or MQTT 3.1.1 CONNECT (keep-alive 0, clean session).
std::string connect_request(Protocol protocol, const std::string& vhost, const std::string& login,
                            const std::string& passcode, const std::string& client_id);

struct FootprintTargets {
  double idle_rss_mib = 10;
  double start_ms = 50;
  double connections_rss_mib = 100;
  unsigned connections = 10000;  // the count the connections target is stated for
};

struct FootprintOptions {
  Protocol protocol = Protocol::stomp;
  std::string command;           // shell command that starts the broker; empty: this carrier's serve
  std::optional<int> pid;        // measure this running broker instead of starting one
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;        // 0: the started carrier's own port
  unsigned connections = 10000;
  double settle_s = 1;           // idle time before each memory reading
  double start_timeout_s = 60;
  std::string login, passcode, vhost;
  bool json = false;
  bool quiet = false;
};

struct FootprintResult {
  Protocol protocol = Protocol::stomp;
  std::string server;                    // host:port connected to
  std::string command;                   // what was started; empty for --pid
  int pid = 0;
  std::optional<double> listen_ms;       // exec -> first accepted TCP connect
  std::optional<double> start_ms;        // exec -> CONNECTED / CONNACK
  std::optional<MemorySample> idle;      // after start (or at once for --pid), settled
  unsigned connections_requested = 0;
  unsigned connections = 0;              // that completed the handshake
  double connect_s = 0;                  // to open them all
  std::optional<MemorySample> loaded;    // with them open, settled
  std::optional<MemorySample> closed;    // after closing them, settled
  std::vector<std::string> errors;

  // Measured completely: every connection established, every reading taken.
  bool complete() const;
};

struct Verdict {
  std::string name;                 // idle_rss_mib, start_ms, connections_rss_mib
  std::optional<double> measured;   // nullopt: not measured (--pid has no start time)
  double limit = 0;
  bool extrapolated = false;        // connections_rss_mib from fewer (or more) connections
  std::optional<bool> met;
};
std::vector<Verdict> judge(const FootprintResult& result, const FootprintTargets& targets = {});

nlohmann::json to_json(const FootprintResult& result, const FootprintTargets& targets = {});
std::string to_text(const FootprintResult& result, const FootprintTargets& targets = {});

// Runs the measurement; exit code 0 measured, 1 failed (a connection, the broker), 2 bad usage.
int run_footprint(const FootprintOptions& options);

// `carrier bench footprint ...`, a subcommand of `bench`.
void add_footprint_command(CLI::App& bench);

}  // namespace carrier::cli::bench
