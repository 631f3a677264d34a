// carrier relay: seed 000's PeerNetwork operations and its demos from the command line.

#include "cli/relay.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "client/relay_client.hpp"
#include "client/stomp_client.hpp"

namespace carrier::cli {

namespace {

struct RelayArgs {
  std::string server = "127.0.0.1:8080";
  std::string user;
  std::string password;
  std::string peer;
  std::int64_t lease_ms = 0;
  double timeout_s = 10;
  // create, search
  std::string kind;  // pipe | group
  std::string name;
  bool propagate = false;
  std::string attr = "name";
  unsigned threshold = 0;
  // join, listen, send
  std::string id;
  std::string group_password;
  std::optional<std::string> body;
  std::string mime;
  std::vector<std::string> elements;  // [ns:]name=value
  std::uint64_t count = 1;
  bool all_elements = false;
  bool demo_group = false;
};

int fail(const std::string& what, const std::string& message) {
  std::fprintf(stderr, "carrier relay %s: %s\n", what.c_str(), message.c_str());
  return kExitFailure;
}

double seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

// A connected peer, or the exit code.
struct Session {
  std::unique_ptr<client::RelayClient> client;
  int exit = kExitOk;
};

Session open(const RelayArgs& a, const std::string& what) {
  Session s;
  auto endpoint = client::parse_endpoint(a.server, 8080);
  if (!endpoint) {
    s.exit = fail(what, endpoint.error().detail);
    return s;
  }
  client::RelayClientOptions o;
  o.host = endpoint->host;
  o.port = endpoint->port;
  o.user = a.user;
  o.password = a.password;
  o.lease_ms = a.lease_ms;
  o.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * 1000));
  s.client = std::make_unique<client::RelayClient>(o);
  auto peer = s.client->connect(a.peer);
  if (!peer) {
    s.exit = fail(what, "connect: " + peer.error().detail);
    return s;
  }
  if (a.peer.empty()) std::fprintf(stderr, "peer: %s\n", peer->c_str());
  return s;
}

// "ns:name=value" (no namespace: the empty one) as an element.
std::optional<relay::codec::Element> element_of(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return std::nullopt;
  std::string key = text.substr(0, eq);
  relay::codec::Element e;
  if (auto colon = key.find(':'); colon != std::string::npos) {
    e.ns = key.substr(0, colon);
    e.name = key.substr(colon + 1);
  } else {
    e.name = key;
  }
  if (e.name.empty() || e.ns == "proxy" || e.ns == "jxta") return std::nullopt;
  e.content = text.substr(eq + 1);
  return e;
}

void print_entry(const client::RelayResponse& r) {
  std::printf("%s %s %s%s%s\n", r.get("type").c_str(), r.get("name").c_str(), r.get("id").c_str(),
              r.get("arg").empty() ? "" : " ", r.get("arg").c_str());
}

// A pipe message: its body (the empty namespace's `message`), or every application element.
void print_message(const client::RelayResponse& r, bool all) {
  if (!all) {
    std::printf("%s\n", r.get("message", "").c_str());
  } else {
    for (const auto& e : r.message.elements) {
      if (e.ns == "proxy" || e.ns == "jxta") continue;
      std::printf("%s%s%s=%s\n", e.ns.c_str(), e.ns.empty() ? "" : ":", e.name.c_str(), e.content.c_str());
    }
    std::printf("\n");
  }
  std::fflush(stdout);
}

// The client bounds every answer by --timeout.
template <class F>
auto wait(F& future, const RelayArgs&) {
  return future.get();
}

int run_pid(const RelayArgs& a) {
  auto endpoint = client::parse_endpoint(a.server, 8080);
  if (!endpoint) return fail("pid", endpoint.error().detail);
  client::RelayClientOptions o;
  o.host = endpoint->host;
  o.port = endpoint->port;
  o.user = a.user;
  o.password = a.password;
  client::RelayClient c(o);
  auto id = c.pid();
  if (!id) return fail("pid", id.error().detail);
  std::printf("%s\n", id->c_str());
  return kExitOk;
}

int run_create(const RelayArgs& a) {
  auto s = open(a, "create");
  if (!s.client) return s.exit;
  const bool group = a.kind == "group";
  const std::string arg = group ? "" : (a.propagate ? "JxtaPropagate" : "JxtaUnicast");
  auto f = s.client->create(group ? "GROUP" : "PIPE", a.name, arg);
  auto r = wait(f, a);
  if (!r) return fail("create", r.error().detail);
  print_entry(*r);
  return kExitOk;
}

int run_search(const RelayArgs& a) {
  auto s = open(a, "search");
  if (!s.client) return s.exit;
  auto f = s.client->search(a.kind == "group" ? "GROUP" : "PIPE", a.attr, a.name.empty() ? "*" : a.name, a.threshold);
  auto r = wait(f, a);
  if (!r) return fail("search", r.error().detail);
  for (const auto& e : *r) print_entry(e);
  return kExitOk;
}

int run_join(const RelayArgs& a) {
  auto s = open(a, "join");
  if (!s.client) return s.exit;
  auto f = s.client->join(a.id, a.group_password);
  auto r = wait(f, a);
  if (!r) return fail("join", r.error().detail);
  std::printf("joined %s\n", a.id.c_str());
  return kExitOk;
}

// Prints pipe messages as they come: `count` of them (0: until `timeout` passes with none).
int print_messages(client::RelayClient& c, const RelayArgs& a, const std::string& what) {
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * 1000));
  for (std::uint64_t n = 0; a.count == 0 || n < a.count; ++n) {
    auto m = c.poll(timeout);
    if (!m) {
      if (a.count == 0 && m.error().code == Errc::timed_out) return kExitOk;
      return fail(what, m.error().detail + " (" + std::to_string(n) + " of " + std::to_string(a.count) + " came)");
    }
    print_message(*m, a.all_elements);
  }
  return kExitOk;
}

int run_listen(const RelayArgs& a) {
  auto s = open(a, "listen");
  if (!s.client) return s.exit;
  auto f = s.client->listen(a.id);
  auto r = wait(f, a);
  if (!r) return fail("listen", r.error().detail);
  std::fprintf(stderr, "listening on %s\n", a.id.c_str());
  return print_messages(*s.client, a, "listen");
}

// A peer that listened in an earlier run (--peer): what waits for it. The relay knows its
// listens; the client polls once it is told there is something to collect.
int run_poll(const RelayArgs& a) {
  if (a.peer.empty()) return fail("poll", "--peer names the peer whose mailbox to poll");
  auto s = open(a, "poll");
  if (!s.client) return s.exit;
  s.client->collect();
  return print_messages(*s.client, a, "poll");
}

int run_send(const RelayArgs& a) {
  std::vector<relay::codec::Element> elements;
  for (const auto& text : a.elements) {
    auto e = element_of(text);
    if (!e) return fail("send", "--element is [NAMESPACE:]NAME=VALUE outside proxy and jxta, not '" + text + "'");
    elements.push_back(std::move(*e));
  }
  if (a.body) {
    relay::codec::Element body{"", "message", *a.body, std::nullopt, std::nullopt};
    if (!a.mime.empty()) body.mime_type = a.mime;
    elements.push_back(std::move(body));
  }
  auto s = open(a, "send");
  if (!s.client) return s.exit;
  for (std::uint64_t i = 0; i < a.count; ++i) {
    auto f = s.client->send(a.id, elements);
    auto r = wait(f, a);
    if (!r) return fail("send", r.error().detail);
  }
  return kExitOk;
}

// Seed 000's PipeDemo (and PeerGroupDemo with --group): create a group and join it, create a
// pipe, find it by name, listen to it, send to it, poll and print what comes back.
int run_demo(const RelayArgs& a) {
  auto s = open(a, "demo");
  if (!s.client) return s.exit;
  auto& c = *s.client;
  const auto start = std::chrono::steady_clock::now();
  auto step = [&](const char* what, const std::string& detail) {
    std::printf("%-7s %s  (%.3f s)\n", what, detail.c_str(), seconds(std::chrono::steady_clock::now() - start));
    std::fflush(stdout);
  };
  const std::string pipe_name = a.name.empty() ? "demoPipe" : a.name;
  if (a.demo_group) {
    auto g = c.create("GROUP", pipe_name + "Group").get();
    if (!g) return fail("demo", "create group: " + g.error().detail);
    step("group", g->get("name") + " " + g->get("id"));
    auto found = c.search("GROUP", "Name", pipe_name + "Group", 1).get();
    if (!found || found->empty()) return fail("demo", "the group was not found");
    step("found", found->front().get("id"));
    auto joined = c.join(found->front().get("id"), a.group_password).get();
    if (!joined) return fail("demo", "join: " + joined.error().detail);
    step("joined", found->front().get("name"));
  }
  auto p = c.create("PIPE", pipe_name, a.propagate ? "JxtaPropagate" : "JxtaUnicast").get();
  if (!p) return fail("demo", "create pipe: " + p.error().detail);
  step("pipe", p->get("name") + " " + p->get("id") + " " + p->get("arg"));
  auto found = c.search("PIPE", "name", pipe_name, 1).get();
  if (!found || found->empty()) return fail("demo", "the pipe was not found");
  const std::string pipe = found->front().get("id");
  step("found", pipe);
  if (auto l = c.listen(pipe).get(); !l) return fail("demo", "listen: " + l.error().detail);
  step("listen", pipe);
  const std::string text = a.body.value_or("Hello");
  std::vector<relay::codec::Element> elements{{"", "sender", "carrier relay demo", std::nullopt, std::nullopt},
                                              {"", "message", text, std::nullopt, std::nullopt}};
  if (auto r = c.send(pipe, elements).get(); !r) return fail("demo", "send: " + r.error().detail);
  step("sent", text);
  auto m = c.poll(std::chrono::milliseconds(static_cast<std::int64_t>(a.timeout_s * 1000)));
  if (!m) return fail("demo", "poll: " + m.error().detail);
  step("polled", m->get("message", "") + " from " + m->get("sender", ""));
  return kExitOk;
}

void common(CLI::App* sub, RelayArgs& a, bool peer = true) {
  sub->add_option("--server", a.server, "The broker's HTTP listener, HOST:PORT")->capture_default_str();
  sub->add_option("--user", a.user, "HTTP Basic user, when the broker has users");
  sub->add_option("--password", a.password, "HTTP Basic password");
  if (!peer) return;
  sub->add_option("--peer", a.peer, "A peer id from an earlier run (default: a new peer)");
  sub->add_option("--lease", a.lease_ms, "Lease asked for, in ms (default: the relay's maximum)");
  sub->add_option("--timeout", a.timeout_s, "Seconds to wait for an answer, or for each message")->capture_default_str();
}

}  // namespace

void add_relay_command(CLI::App& app) {
  auto args = std::make_shared<RelayArgs>();
  auto* cmd = app.add_subcommand("relay", "Take part in seed 000's relay over HTTP, as a thin client");
  cmd->require_subcommand(1);
  auto run = [args](int (*fn)(const RelayArgs&)) { return [args, fn] { std::exit(fn(*args)); }; };

  auto* pid = cmd->add_subcommand("pid", "Print a new peer id");
  common(pid, *args, false);
  pid->callback(run(run_pid));

  auto* create = cmd->add_subcommand("create", "Create a pipe or a group; prints TYPE NAME ID ARG");
  create->add_option("KIND", args->kind, "pipe or group")->required()->check(CLI::IsMember({"pipe", "group"}));
  create->add_option("NAME", args->name, "Its name")->required();
  create->add_flag("--propagate", args->propagate, "A propagate pipe (a topic); default unicast (a queue)");
  common(create, *args);
  create->callback(run(run_create));

  auto* search = cmd->add_subcommand("search", "Search pipes or groups; prints TYPE NAME ID ARG per match");
  search->add_option("KIND", args->kind, "pipe or group")->required()->check(CLI::IsMember({"pipe", "group"}));
  search->add_option("VALUE", args->name, "What to match, * a wildcard (default: *)");
  search->add_option("--attr", args->attr, "name or id")->capture_default_str();
  search->add_option("--threshold", args->threshold, "At most this many results");
  common(search, *args);
  search->callback(run(run_search));

  auto* join = cmd->add_subcommand("join", "Join a group (pipes created after it are the group's)");
  join->add_option("GROUP_ID", args->id, "The group's id")->required();
  join->add_option("--group-password", args->group_password, "The group's password");
  common(join, *args);
  join->callback(run(run_join));

  auto* listen = cmd->add_subcommand("listen", "Listen on a pipe, then poll and print its messages");
  listen->add_option("PIPE_ID", args->id, "The pipe's id")->required();
  listen->add_option("--count", args->count, "Messages to print; 0 = until --timeout passes with none")
      ->capture_default_str();
  listen->add_flag("--elements", args->all_elements, "Print every element ([ns:]name=value), not only the body");
  common(listen, *args);
  listen->callback(run(run_listen));

  auto* poll = cmd->add_subcommand("poll", "Poll the mailbox of a peer that listened before (--peer)");
  poll->add_option("--count", args->count, "Messages to print; 0 = until --timeout passes with none")
      ->capture_default_str();
  poll->add_flag("--elements", args->all_elements, "Print every element ([ns:]name=value), not only the body");
  common(poll, *args);
  poll->callback(run(run_poll));

  auto* send = cmd->add_subcommand("send", "Send a message to a pipe");
  send->add_option("PIPE_ID", args->id, "The pipe's id")->required();
  send->add_option("--body", args->body, "The body (the empty namespace's `message` element)");
  send->add_option("--mime", args->mime, "The body's MIME type");
  send->add_option("--element", args->elements, "Another element, [NAMESPACE:]NAME=VALUE (repeatable)");
  send->add_option("--count", args->count, "Send it this many times")->capture_default_str();
  common(send, *args);
  send->callback(run(run_send));

  auto* demo = cmd->add_subcommand("demo", "Seed 000's PipeDemo: create, search, listen, send, poll and print");
  demo->add_option("NAME", args->name, "The pipe's name (default demoPipe)");
  demo->add_flag("--propagate", args->propagate, "A propagate pipe (a topic)");
  demo->add_option("--body", args->body, "What to send (default Hello)");
  demo->add_flag("--group", args->demo_group, "First create, find and join a group (PeerGroupDemo)");
  demo->add_option("--group-password", args->group_password, "The group's password");
  common(demo, *args);
  demo->callback(run(run_demo));
}

}  // namespace carrier::cli
