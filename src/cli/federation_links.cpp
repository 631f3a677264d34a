// carrier federation add|remove|list: a running node's links changed and listed at runtime
// through its admin API (POST/DELETE/GET /admin/v1/federation/links, docs/federation.md).
#include <iostream>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/admin_client.hpp"
#include "cli/federation.hpp"

namespace carrier::cli {

namespace {

using nlohmann::json;

struct LinkArgs {
  std::string server = "127.0.0.1:8080";
  std::string user;
  std::string name;
  std::string connect;
  std::string username;
  std::int32_t cost = 1;
  bool tls = false;
  std::string ca_file, server_name, cert_file, key_file;
  bool json_out = false;
};

// One admin API request; the password of --user from $CARRIER_PASSWORD, as `carrier admin`.
std::pair<int, std::string> call(const LinkArgs& args, std::string_view method, const std::string& target,
                                 std::string body = {}) {
  auto answer = admin_call(AdminServer{args.server, args.user}, method, target, std::move(body));
  return {answer.status, std::move(answer.body)};
}

void print_table(const json& doc) {
  std::cout << fmt::format("node {}  dedup {} ids, {} hits  reply routes {}\n", doc.value("node_id", ""),
                           doc["dedup"].value("size", 0), doc["dedup"].value("hits", 0), doc.value("reply_routes", 0));
  std::cout << fmt::format("{:<24} {:<9} {:<24} {:<4} {:<11} {:>9} {:>9} {:>8} {}\n", "NAME", "DIRECTION", "CONNECT",
                           "TLS", "STATE", "PUSHED", "RECEIVED", "BACKLOG", "PAUSED");
  for (const auto& l : doc["links"]) {
    std::string paused;
    for (const auto& p : l["paused"]) {
      if (!paused.empty()) paused += ',';  // appended, not `"," + s`: g++ 12 -O3's false -Wrestrict
      paused += p.get<std::string>();
    }
    std::cout << fmt::format("{:<24} {:<9} {:<24} {:<4} {:<11} {:>9} {:>9} {:>8} {}\n", l.value("name", ""),
                             l.value("direction", ""), l.value("connect", ""), l.value("tls", false) ? "yes" : "no",
                             l.value("state", ""),
                             l.value("pushed", 0), l.value("received", 0), l.value("backlog", 0), paused);
  }
}

int run(const LinkArgs& args, std::string_view action) {
  try {
    std::pair<int, std::string> answer;
    if (action == "list") {
      answer = call(args, "GET", "/admin/v1/federation/links");
    } else if (action == "add") {
      json body{{"name", args.name}, {"connect", args.connect}, {"cost", args.cost}};
      if (args.tls) body["tls"] = true;
      for (auto [key, value] : {std::pair{"ca_file", &args.ca_file}, std::pair{"server_name", &args.server_name},
                                std::pair{"cert_file", &args.cert_file}, std::pair{"key_file", &args.key_file}}) {
        if (!value->empty()) body[key] = *value;
      }
      if (!args.username.empty()) {
        body["username"] = args.username;
        const char* password = std::getenv("CARRIER_FEDERATION_PASSWORD");
        body["password"] = password != nullptr ? password : "";
      }
      answer = call(args, "POST", "/admin/v1/federation/links", body.dump());
    } else {
      answer = call(args, "DELETE", "/admin/v1/federation/links/" + url_encode(args.name));
    }
    const auto& [status, text] = answer;
    if (status >= 400) {
      std::string detail = text;
      if (auto doc = json::parse(text, nullptr, false); doc.is_object() && doc.contains("detail")) {
        detail = doc["detail"].get<std::string>();
      }
      std::cerr << "carrier federation: " << status << " " << detail << "\n";
      return 1;
    }
    if (action != "list") {
      std::cout << "ok\n";
      return 0;
    }
    auto doc = json::parse(text, nullptr, false);
    if (!doc.is_object() || !doc.contains("links") || !doc.contains("dedup")) {
      std::cerr << "carrier federation: the answer is not the links' JSON\n";
      return 1;
    }
    if (args.json_out) {
      std::cout << doc.dump(2) << "\n";
    } else {
      print_table(doc);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "carrier federation: " << args.server << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void add_federation_link_commands(CLI::App& federation) {
  for (std::string_view action : {"add", "remove", "list"}) {
    auto args = std::make_shared<LinkArgs>();
    auto* sub = federation.add_subcommand(std::string(action), action == "add"      ? "Add a link the node dials"
                                                               : action == "remove" ? "Remove a link the node dials"
                                                                                    : "List the node's links");
    sub->add_option("--server", args->server, "The node's HTTP listener, HOST:PORT (default 127.0.0.1:8080)");
    sub->add_option("--user", args->user, "An admin user ([admin] users); password from $CARRIER_PASSWORD");
    if (action == "list") sub->add_flag("--json", args->json_out, "Print the JSON answer");
    if (action != "list") sub->add_option("--name", args->name, "The link's name")->required();
    if (action == "add") {
      sub->add_option("--connect", args->connect, "The far node's federation listener, HOST:PORT")->required();
      sub->add_option("--username", args->username,
                      "A user of the far node ([auth]); password from $CARRIER_FEDERATION_PASSWORD");
      sub->add_option("--cost", args->cost, "The cost asked for in negotiate (default 1)");
      sub->add_flag("--tls", args->tls, "Dial the far node's listener over TLS");
      sub->add_option("--ca", args->ca_file,
                      "TLS: the CAs the far node's certificate chains to (a file the node reads)");
      sub->add_option("--server-name", args->server_name,
                      "TLS: the name its certificate must carry (default: the host)");
      sub->add_option("--cert", args->cert_file, "TLS: a client certificate for mutual TLS (a file the node reads)");
      sub->add_option("--key", args->key_file, "TLS: the client certificate's key");
    }
    sub->callback([args, action] { std::exit(run(*args, action)); });
  }
}

}  // namespace carrier::cli
