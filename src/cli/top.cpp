// carrier top: a live view of a running broker in the terminal (plain ANSI, like top(1)):
// message rates, depths, the busiest connections, refreshed every --interval seconds; q quits.

#include "cli/top.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin_client.hpp"
#include "cli/admin_table.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

using nlohmann::json;

struct TopArgs : AdminServer {
  double interval_seconds = 1.0;
  std::size_t iterations = 0;  // 0: until q; otherwise this many screens (scripts, tests)
};

volatile std::sig_atomic_t g_stop = 0;
void on_stop_signal(int) { g_stop = 1; }

// The terminal in a mode where one key press is read at once and not echoed, and the alternate
// screen (what was on the terminal comes back at the end); restored however the view ends.
class TerminalMode {
 public:
  TerminalMode() {
    if (::isatty(STDIN_FILENO) != 0 && ::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      restore_ = ::tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
    }
    std::cout << "\x1b[?1049h\x1b[?25l" << std::flush;  // alternate screen, cursor hidden
  }
  ~TerminalMode() {
    std::cout << "\x1b[?25h\x1b[?1049l" << std::flush;
    if (restore_) (void)::tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  TerminalMode(const TerminalMode&) = delete;
  TerminalMode& operator=(const TerminalMode&) = delete;

 private:
  termios saved_{};
  bool restore_ = false;
};

// Waits up to `timeout` for a key; true if it was q (or Q).
bool quit_pressed(std::chrono::milliseconds timeout) {
  pollfd fd{STDIN_FILENO, POLLIN, 0};
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (g_stop == 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int n = ::poll(&fd, 1, static_cast<int>(left.count()));
    if (n <= 0) continue;  // a timeout ends the loop above; EINTR looks again
    char c = 0;
    const bool got = (fd.revents & POLLIN) != 0 && ::read(STDIN_FILENO, &c, 1) == 1;
    if (!got) {
      // No keys to read (stdin closed or not a terminal): just wait out the interval.
      const auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (rest.count() > 0) (void)::poll(nullptr, 0, static_cast<int>(rest.count()));
      return g_stop != 0;
    }
    if (c == 'q' || c == 'Q') return true;
  }
  return true;
}

std::size_t terminal_rows() {
  winsize ws{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return 40;
}

json get(const TopArgs& args, const std::string& target) {
  const auto answer = admin_call(args, "GET", target);
  if (answer.status != 200) {
    std::string detail = answer.body;
    if (auto doc = json::parse(answer.body, nullptr, false); doc.is_object() && doc.contains("detail")) {
      detail = doc["detail"].get<std::string>();
    }
    throw std::runtime_error(fmt::format("{} {}", answer.status, detail));
  }
  auto doc = json::parse(answer.body, nullptr, false);
  if (doc.is_discarded()) throw std::runtime_error("the answer is not JSON");
  return doc;
}

std::string bytes_text(double n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  while (n >= 1024 && u + 1 < std::size(units)) {
    n /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f} {}", n, units[u]) : fmt::format("{:.1f} {}", n, units[u]);
}

std::string uptime_text(double seconds) {
  const auto s = static_cast<long long>(seconds);
  return fmt::format("{}d {:02}:{:02}:{:02}", s / 86400, (s / 3600) % 24, (s / 60) % 60, s % 60);
}

// What the previous screen saw, for the broker-wide rates.
struct Previous {
  std::chrono::steady_clock::time_point at;
  std::uint64_t published = 0;
  std::uint64_t delivered = 0;
};

// One screen: the overview's numbers and rates, the deepest queues, the busiest connections.
std::string render(const TopArgs& args, std::optional<Previous>& previous, std::size_t rows) {
  const auto overview = get(args, "/admin/v1/overview");
  const std::size_t table_rows = rows > 16 ? (rows - 12) / 2 : 2;
  const auto queues = get(args, fmt::format("/admin/v1/destinations?sort=depth&order=desc&limit={}", table_rows));
  const auto connections =
      get(args, fmt::format("/admin/v1/connections?sort=in&order=desc&limit={}", table_rows));
  const auto now = std::chrono::steady_clock::now();
  const auto& m = overview["messages"];
  const auto published = m.value("published", std::uint64_t{0});
  const auto delivered = m.value("delivered", std::uint64_t{0});
  double in_rate = 0, out_rate = 0;
  if (previous) {
    const double dt = std::chrono::duration<double>(now - previous->at).count();
    if (dt > 0) {
      in_rate = static_cast<double>(published - std::min(published, previous->published)) / dt;
      out_rate = static_cast<double>(delivered - std::min(delivered, previous->delivered)) / dt;
    }
  }
  previous = Previous{now, published, delivered};

  std::string out = "\x1b[H\x1b[2J";
  out += fmt::format("carrier top - {}  version {}  up {}  {} shard(s)  {}\n", args.server,
                     overview.value("version", ""), uptime_text(overview.value("uptime_seconds", 0.0)),
                     overview.value("shards", 0), overview.value("ready", false) ? "ready" : "NOT READY");
  out += fmt::format("Messages: {:.1f}/s in, {:.1f}/s out   ready {}  unacked {}  scheduled {}  "
                     "published {}  delivered {}  dead-lettered {}\n",
                     in_rate, out_rate, m.value("ready", 0), m.value("unacked", 0), m.value("scheduled", 0), published,
                     delivered, m.value("dead_lettered", 0));
  const auto& mem = overview["memory"];
  const auto& store = overview["store"];
  out += fmt::format("Memory: {} of {}   Store: {} {}, {} batch(es), mean commit {:.2f} ms\n",
                     bytes_text(mem.value("used_bytes", 0.0)),
                     mem.value("limit_bytes", 0.0) > 0 ? bytes_text(mem.value("limit_bytes", 0.0)) : "no limit",
                     store.value("kind", ""), store.value("healthy", false) ? "healthy" : "FAILING",
                     store.value("batches", 0), store.value("commit_ms_mean", 0.0));
  std::string per_protocol;
  for (const auto& [protocol, n] : overview["connections"].items()) {
    if (protocol == "total") continue;
    per_protocol += fmt::format("{}{} {}", per_protocol.empty() ? "" : ", ", protocol, n.dump());
  }
  out += fmt::format("Connections: {}{}   Queues: {}   Topic subscriptions: {}\n\n",
                     overview["connections"].value("total", 0), per_protocol.empty() ? "" : " (" + per_protocol + ")",
                     overview["destinations"].value("queues", 0),
                     overview["destinations"].value("topic_subscriptions", 0));
  out += "Deepest queues and subscriptions\n";
  if (auto t = format_admin_table("queues", queues)) out += *t;
  out += "\nBusiest connections\n";
  if (auto t = format_admin_table("connections", connections)) out += *t;
  out += fmt::format("\nEvery {}s. q quits.\n", args.interval_seconds);
  return out;
}

int run_top(const TopArgs& args) {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  TerminalMode mode;
  std::optional<Previous> previous;
  const auto interval = std::chrono::milliseconds(static_cast<long long>(args.interval_seconds * 1000));
  for (std::size_t screen = 0; g_stop == 0; ++screen) {
    if (args.iterations != 0 && screen >= args.iterations) break;
    try {
      std::cout << render(args, previous, terminal_rows()) << std::flush;
    } catch (const std::exception& e) {
      std::cout << "\x1b[H\x1b[2J" << fmt::format("carrier top - {}: {}\n\nTrying again every {}s. q quits.\n",
                                                   args.server, e.what(), args.interval_seconds)
                << std::flush;
      previous.reset();
    }
    if (quit_pressed(interval)) break;
  }
  return kExitOk;
}

}  // namespace

void add_top_command(CLI::App& app) {
  auto args = std::make_shared<TopArgs>();
  auto* cmd = app.add_subcommand("top", "A live view of a running broker: rates, depths, connections (q quits)");
  cmd->add_option("--server", args->server, "The broker's HTTP listener HOST:PORT (default 127.0.0.1:8080)");
  cmd->add_option("--user", args->user, "An admin user (password from $CARRIER_PASSWORD)");
  cmd->add_option("--interval", args->interval_seconds, "Seconds between refreshes (default 1)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--iterations", args->iterations, "Stop after this many refreshes (default: until q)");
  cmd->callback([args] { std::exit(run_top(*args)); });
}

}  // namespace carrier::cli
