// carrier admin: the admin API over HTTP/1.1, printed as aligned tables (or --json).

#include "cli/admin.hpp"

#include <cctype>
#include <cstdlib>
#include <memory>
#include <iostream>
#include <string>

#include "net/asio.hpp"  // before Beast: it includes Asio

#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin_table.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

namespace bhttp = boost::beast::http;
using nlohmann::json;

struct AdminArgs {
  std::string server = "127.0.0.1:8080";
  std::string user;
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
};

struct Answer {
  int status = 0;
  std::string body;
};

// "a b" -> "a%20b": a query value or path segment.
std::string encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

Answer call(const AdminArgs& args, bhttp::verb method, const std::string& target) {
  const auto colon = args.server.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--server must be HOST:PORT");
  const std::string host = args.server.substr(0, colon);
  const std::string port = args.server.substr(colon + 1);
  net::asio::io_context io;
  net::tcp::resolver resolver(io);
  net::tcp::socket socket(io);
  net::asio::connect(socket, resolver.resolve(host, port));
  bhttp::request<bhttp::string_body> req(method, target, 11);
  req.set(bhttp::field::host, host);
  req.set(bhttp::field::user_agent, "carrier-admin");
  if (!args.user.empty()) {
    const char* password = std::getenv("CARRIER_PASSWORD");
    const std::string plain = args.user + ":" + (password != nullptr ? password : "");
    std::string encoded(boost::beast::detail::base64::encoded_size(plain.size()), '\0');
    encoded.resize(boost::beast::detail::base64::encode(encoded.data(), plain.data(), plain.size()));
    req.set(bhttp::field::authorization, "Basic " + encoded);
  }
  req.prepare_payload();
  bhttp::write(socket, req);
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(socket, buffer, res);
  boost::system::error_code ignored;
  socket.shutdown(net::tcp::socket::shutdown_both, ignored);
  return Answer{static_cast<int>(res.result_int()), std::move(res.body())};
}

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

int run(const AdminArgs& args, std::string_view action) {
  try {
    if (action == "queues" || action == "subscriptions" || action == "connections") {
      std::string target = action == "connections" ? "/admin/v1/connections?" : "/admin/v1/destinations?";
      if (action != "connections") target += action == "queues" ? "kind=queue&" : "kind=subscription&";
      // A name sorts A to Z; a count, largest first (--asc turns either round).
      const bool by_name = args.sort == "name" || args.sort == "id" || args.sort == "protocol" || args.sort == "peer";
      const bool descending = !by_name && !args.ascending;
      target += fmt::format("sort={}&order={}&limit={}", encode(args.sort), descending ? "desc" : "asc", args.limit);
      if (!args.filter.empty()) target += "&filter=" + encode(args.filter);
      return report(args, call(args, bhttp::verb::get, target), action);
    }
    if (action == "overview") return report(args, call(args, bhttp::verb::get, "/admin/v1/overview"), "");
    const std::string path = "/admin/v1/queues/" + encode(args.queue);
    if (action == "browse") {
      return report(args, call(args, bhttp::verb::get, fmt::format("{}/messages?limit={}", path, args.browse_limit)),
                    "browse");
    }
    if (action == "purge") {
      std::string target = path + "/messages";
      if (!args.selector.empty()) target += "?selector=" + encode(args.selector);
      return report(args, call(args, bhttp::verb::delete_, target), "");
    }
    if (action == "move") {
      std::string target = path + "/move?to=" + encode(args.to);
      if (!args.selector.empty()) target += "&selector=" + encode(args.selector);
      if (args.copy) target += "&copy=true";
      return report(args, call(args, bhttp::verb::post, target), "");
    }
    if (action == "close") {
      return report(args, call(args, bhttp::verb::delete_, fmt::format("/admin/v1/connections/{}", args.connection)),
                    "");
    }
    std::cerr << "carrier admin: unknown action\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "carrier admin: " << args.server << ": " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace

void add_admin_command(CLI::App& app) {
  auto args = std::make_shared<AdminArgs>();
  auto* admin = app.add_subcommand("admin", "Ask a running broker's admin API (docs/admin.md)");
  admin->require_subcommand(1);
  admin->add_option("--server", args->server, "The broker's HTTP listener HOST:PORT (default 127.0.0.1:8080)");
  admin->add_option("--user", args->user, "An admin user (password from $CARRIER_PASSWORD)");
  for (const char* view : {"queues", "subscriptions", "connections"}) {
    auto* cmd = admin->add_subcommand(view, std::string("List ") + view);
    cmd->add_option("--sort", args->sort, "Sort key (name, depth, bytes, unacked, consumers, enqueued; id, since...)");
    cmd->add_flag("--asc", args->ascending, "Smallest first (counts sort largest first by default)");
    cmd->add_option("--filter", args->filter, "Only names (or peers, protocols) containing this");
    cmd->add_option("--limit", args->limit, "At most this many rows (default 100)");
    cmd->add_flag("--json", args->json_out, "The API's JSON instead of a table");
    cmd->callback([args, view] {
      if (std::string_view(view) == "connections" && args->sort == "name") args->sort = "id";
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
  close->callback([args] { std::exit(run(*args, "close")); });
}

}  // namespace carrier::cli
