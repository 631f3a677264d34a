#pragma once

// carrier bench backlog: a queue larger than memory (issue 17). Against a broker it starts (this
// carrier's serve, or --command for another one) or one already running, over STOMP: fills one
// queue with N persistent messages and no consumer, restarts the broker on the same data and
// times exec -> listening -> CONNECTED, then drains the queue with one consumer, checking that
// every message comes back once and in order. Each phase reports its rate and the broker's
// RSS after it and at its peak (VmHWM, which a restart resets).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/bench_footprint.hpp"

namespace carrier::cli::bench {

struct BacklogOptions {
  std::string command;              // shell command starting the broker; empty: this carrier's serve
  bool attach = false;              // --server without --command: a broker already running
  std::optional<int> pid;           // its process, for RSS (attach only)
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;           // STOMP; 0: the started carrier's own
  std::string config;               // this carrier's --config (e.g. [core] memory_budget_bytes)
  std::string store = "log";        // this carrier's --store
  std::string data_dir;             // this carrier's --data-dir; empty: a temporary one, removed
  std::string dest = "/queue/bench.backlog";
  std::uint64_t count = 1000000;
  std::size_t size = 1024;
  bool fill = true, restart = true, drain = true;
  bool crash = false;               // restart with SIGKILL instead of SIGTERM
  bool non_persistent = false;      // fill with non-persistent messages (spilled past the budget; no restart)
  unsigned window = 1000;           // messages per receipt while filling
  unsigned prefetch = 1000;         // the consumer's credit while draining
  double start_timeout_s = 600;
  std::string login, passcode, vhost;
  bool json = false;
  bool quiet = false;
};

struct BacklogPhase {
  std::string name;                    // fill, drain
  std::uint64_t count = 0;
  double seconds = 0;
  std::optional<MemorySample> after;   // after the phase (hwm_kib: the peak since the broker started)
};

struct BacklogResult {
  std::string command;
  std::vector<BacklogPhase> phases;
  std::optional<double> restart_listen_ms, restart_start_ms;
  bool crashed = false;                // the restart was a SIGKILL (--crash)
  std::optional<MemorySample> ready;   // RSS once CONNECTED after the restart
  // The drain's check: sequence numbers are 0..count-1 as sent.
  std::uint64_t received = 0, duplicates = 0, out_of_order = 0, missing = 0;
  std::vector<std::string> errors;
};

nlohmann::json to_json(const BacklogResult& r);
std::string to_text(const BacklogResult& r);

int run_backlog(const BacklogOptions& options);
void add_backlog_command(CLI::App& bench);

}  // namespace carrier::cli::bench
