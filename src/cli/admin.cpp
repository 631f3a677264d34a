// carrier admin: the admin API over HTTP/1.1, printed as aligned tables (or --json).

#include "cli/admin.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin_client.hpp"
#include "cli/admin_table.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

using nlohmann::json;

struct AdminArgs : AdminServer {
  // views
  std::string sort = "name";
  bool ascending = false;
  std::string filter;
  std::size_t limit = 100;
  std::size_t browse_limit = 20;
  bool json_out = false;
  // actions
  std::string queue;
  std::string selector;
  std::string to;
  bool copy = false;
  std::uint64_t connection = 0;
  std::string reason;
  double watch_seconds = 0;  // > 0: the list again every so many seconds, as `watch` does
};

using Answer = AdminAnswer;
constexpr std::string_view kGet = "GET", kPost = "POST", kDelete = "DELETE";

Answer call(const AdminArgs& args, std::string_view method, const std::string& target) {
  return admin_call(args, method, target);
}

std::string encode(std::string_view text) { return url_encode(text); }

// Prints the answer: a table, the JSON (--json), or the problem's detail on stderr (exit 1).
int report(const AdminArgs& args, const Answer& a, std::string_view view) {
  if (a.status >= 400) {
    std::string detail = a.body;
    if (auto doc = json::parse(a.body, nullptr, false); doc.is_object() && doc.contains("detail")) {
      detail = doc["detail"].get<std::string>();
    }
    std::cerr << "carrier admin: " << a.status << " " << detail << "\n";
    return kExitFailure;
  }
  if (a.status == 204) return kExitOk;
  auto doc = json::parse(a.body, nullptr, false);
  if (doc.is_discarded()) {
    std::cerr << "carrier admin: the answer is not JSON\n";
    return kExitFailure;
  }
  if (args.json_out || view.empty()) {
    std::cout << doc.dump(2) << "\n";
    return kExitOk;
  }
  auto text = format_admin_table(view, doc);
  if (!text) {
    std::cerr << "carrier admin: " << text.error().detail << "\n";
    return kExitFailure;
  }
  std::cout << *text;
  return kExitOk;
}

bool is_list(std::string_view action) {
  return action == "queues" || action == "subscriptions" || action == "topics" || action == "connections";
}

int run(const AdminArgs& args, std::string_view action) {
  try {
    if (is_list(action)) {
      std::string target = action == "connections" ? "/admin/v1/connections?"
                           : action == "topics"    ? "/admin/v1/topics?"
                                                   : "/admin/v1/destinations?";
      if (action == "queues" || action == "subscriptions") {
        target += action == "queues" ? "kind=queue&" : "kind=subscription&";
      }
      // A name sorts A to Z; a count, largest first (--asc turns either round).
      const bool by_name = args.sort == "name" || args.sort == "id" || args.sort == "protocol" || args.sort == "peer" ||
                           args.sort == "client" || args.sort == "user";
      const bool descending = !by_name && !args.ascending;
      target += fmt::format("sort={}&order={}&limit={}", encode(args.sort), descending ? "desc" : "asc", args.limit);
      if (!args.filter.empty()) target += "&filter=" + encode(args.filter);
      return report(args, call(args, kGet, target), action);
    }
    if (action == "overview") return report(args, call(args, kGet, "/admin/v1/overview"), "");
    const std::string path = "/admin/v1/queues/" + encode(args.queue);
    if (action == "browse") {
      return report(args, call(args, kGet, fmt::format("{}/messages?limit={}", path, args.browse_limit)),
                    "browse");
    }
    if (action == "purge") {
      std::string target = path + "/messages";
      if (!args.selector.empty()) target += "?selector=" + encode(args.selector);
      return report(args, call(args, kDelete, target), "");
    }
    if (action == "move") {
      std::string target = path + "/move?to=" + encode(args.to);
      if (!args.selector.empty()) target += "&selector=" + encode(args.selector);
      if (args.copy) target += "&copy=true";
      return report(args, call(args, kPost, target), "");
    }
    if (action == "close") {
      std::string target = fmt::format("/admin/v1/connections/{}", args.connection);
      if (!args.reason.empty()) target += "?reason=" + encode(args.reason);
      return report(args, call(args, kDelete, target), "");
    }
    std::cerr << "carrier admin: unknown action\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "carrier admin: " << args.server << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

// --watch: the list, the screen cleared, every `watch_seconds`, under a line saying so (as
// `watch` prints it), until interrupted. A failed call is shown and tried again.
[[noreturn]] void watch(const AdminArgs& args, std::string_view action) {
  const auto every = std::chrono::duration<double>(args.watch_seconds);
  for (;;) {
    const auto began = std::chrono::steady_clock::now();
    const std::time_t now = std::time(nullptr);
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", std::localtime(&now));
    std::cout << "\x1b[H\x1b[2J" << fmt::format("Every {}s: carrier admin {} ({})    {}\n\n", args.watch_seconds, action,
                                               args.server, when);
    std::cout.flush();
    (void)run(args, action);
    std::cout.flush();
    std::this_thread::sleep_until(began + std::chrono::duration_cast<std::chrono::steady_clock::duration>(every));
  }
}

}  // namespace

void add_admin_command(CLI::App& app) {
  auto args = std::make_shared<AdminArgs>();
  auto* admin = app.add_subcommand("admin", "Ask a running broker's admin API (docs/admin.md)");
  admin->require_subcommand(1);
  admin->add_option("--server", args->server, "The broker's HTTP listener HOST:PORT (default 127.0.0.1:8080)");
  admin->add_option("--user", args->user, "An admin user (password from $CARRIER_PASSWORD)");
  for (const char* view : {"queues", "subscriptions", "topics", "connections"}) {
    auto* cmd = admin->add_subcommand(view, std::string("List ") + view);
    cmd->add_option("--sort", args->sort,
                    "Sort key (name, depth, bytes, unacked, consumers, enqueued, age; id, since, client, user, in, out...)");
    cmd->add_flag("--asc", args->ascending, "Smallest first (counts sort largest first by default)");
    cmd->add_option("--filter", args->filter, "Only names (or peers, protocols) containing this");
    cmd->add_option("--limit", args->limit, "At most this many rows (default 100)");
    cmd->add_flag("--json", args->json_out, "The API's JSON instead of a table");
    cmd->add_option("--watch", args->watch_seconds, "Refresh every N seconds (as `watch` does) until Ctrl-C")
        ->check(CLI::Range(0.1, 86400.0));
    cmd->callback([args, view] {
      if (std::string_view(view) == "connections" && args->sort == "name") args->sort = "id";
      if (args->watch_seconds > 0) watch(*args, view);
      std::exit(run(*args, view));
    });
  }
  auto* overview = admin->add_subcommand("overview", "Version, uptime, store, memory, totals (JSON)");
  overview->callback([args] { std::exit(run(*args, "overview")); });
  auto* browse = admin->add_subcommand("browse", "Show a queue's messages without consuming them");
  browse->add_option("queue", args->queue, "Queue name")->required();
  browse->add_option("--limit", args->browse_limit, "At most this many (default 20)");
  browse->add_flag("--json", args->json_out, "The API's JSON instead of a table");
  browse->callback([args] { std::exit(run(*args, "browse")); });
  auto* purge = admin->add_subcommand("purge", "Remove a queue's ready messages");
  purge->add_option("queue", args->queue, "Queue name")->required();
  purge->add_option("--selector", args->selector, "Only messages this JMS selector matches");
  purge->callback([args] { std::exit(run(*args, "purge")); });
  auto* move = admin->add_subcommand("move", "Move (or copy) ready messages to another queue");
  move->add_option("queue", args->queue, "Source queue name")->required();
  move->add_option("--to", args->to, "Target queue")->required();
  move->add_option("--selector", args->selector, "Only messages this JMS selector matches");
  move->add_flag("--copy", args->copy, "Copy instead of move");
  move->callback([args] { std::exit(run(*args, "move")); });
  auto* close = admin->add_subcommand("close", "Close a connection (its id from `carrier admin connections`)");
  close->add_option("id", args->connection, "Connection id")->required();
  close->add_option("--reason", args->reason, "Told to the client (STOMP ERROR, MQTT 5 DISCONNECT, WebSocket close)");
  close->callback([args] { std::exit(run(*args, "close")); });
}

}  // namespace carrier::cli
