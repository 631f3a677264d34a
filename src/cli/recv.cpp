// carrier recv: receives N messages from a destination and prints their bodies.

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/tls_flags.hpp"
#include "client/server_address.hpp"
#include "client/stomp_client.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

// Prefetch asked for when --count is given: no more than we will take, so with client acks the
// broker keeps the rest for other consumers; capped so a huge count does not ask for an
// unbounded window.
constexpr std::uint64_t kMaxPrefetch = 1000;

struct RecvArgs {
  std::string destination;
  std::uint64_t count = 1;
  double timeout_s = 10;
  std::string ack = "auto";
  std::string selector;
  bool headers = false;
  std::string server = "127.0.0.1:61613";
  std::string login;
  std::string passcode;
  net::TlsClientOptions tls;
};

int recv_failed(const std::string& message) {
  std::fprintf(stderr, "carrier recv: %s\n", message.c_str());
  return kExitFailure;
}

int recv_usage(const std::string& message) {
  std::fprintf(stderr, "carrier recv: %s\n", message.c_str());
  return kExitUsage;
}

void print(const client::Message& message, bool with_headers) {
  if (with_headers) {
    for (const auto& [name, value] : message.headers) {
      std::fwrite(name.data(), 1, name.size(), stdout);
      std::fputc(':', stdout);
      std::fwrite(value.data(), 1, value.size(), stdout);
      std::fputc('\n', stdout);
    }
    std::fputc('\n', stdout);
  }
  std::fwrite(message.body.data(), 1, message.body.size(), stdout);
  std::fputc('\n', stdout);
  // A reader at the other end of a pipe sees each message as it comes.
  std::fflush(stdout);
}

int run_recv(const RecvArgs& args) {
  auto mode = client::parse_ack_mode(args.ack);
  if (!mode) return recv_usage("--ack must be auto, client or client-individual");
  auto server = client::parse_server_address(args.server, 61613);
  if (!server) return recv_usage("--server: " + server.error().detail);
  const auto* endpoint = &server->endpoint;
  const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(args.timeout_s * 1000));

  client::ConnectOptions connect_options;
  connect_options.login = args.login;
  connect_options.passcode = args.passcode;
  connect_options.tls = args.tls;
  connect_options.tls.enabled = args.tls.enabled || server->tls;  // wss://
  connect_options.websocket_path = server->websocket_path;
  connect_options.timeout = std::max(timeout, std::chrono::milliseconds(1000));
  client::StompClient client;
  if (auto s = client.connect(endpoint->host, endpoint->port, connect_options); !s) {
    return recv_failed("cannot connect to " + args.server + ": " + s.error().to_string());
  }

  client::SubscribeOptions subscribe;
  // --ack auto means "the CLI acks for you", not ack:auto on the wire: with ack:auto a broker
  // counts a message consumed once it is written to our socket, so messages past the N-th (or
  // arriving as the timeout ends) would be taken off the queue and never printed. As
  // client-individual, each is acked after it was printed and the rest go back to the queue.
  subscribe.ack = *mode == client::AckMode::automatic ? client::AckMode::client_individual : *mode;
  subscribe.selector = args.selector;
  if (args.count > 0) subscribe.prefetch = static_cast<unsigned>(std::min(args.count, kMaxPrefetch));
  const std::string destination = client::normalize_destination(args.destination);
  if (auto id = client.subscribe(destination, subscribe); !id) {
    return recv_failed("subscribe to " + destination + ": " + id.error().to_string());
  }

  for (std::uint64_t k = 1; args.count == 0 || k <= args.count; ++k) {
    auto message = client.receive(timeout);
    if (!message) {
      if (message.error().code != Errc::timed_out) {
        return recv_failed("receiving from " + destination + ": " + message.error().to_string());
      }
      if (args.count == 0) break;  // "until timeout": the quiet end is the normal end
      (void)client.disconnect();
      return recv_failed(fmt::format("timed out after {} s waiting for message {} of {}", args.timeout_s,
                              k, args.count));
    }
    print(*message, args.headers);
    if (auto s = client.ack(*message); !s) return recv_failed("ack: " + s.error().to_string());
  }
  // Its receipt tells us the broker handled our acks before we go.
  if (auto s = client.disconnect(); !s) return recv_failed("disconnect: " + s.error().to_string());
  return kExitOk;
}

}  // namespace

void add_recv_command(CLI::App& app) {
  auto args = std::make_shared<RecvArgs>();
  auto* command = app.add_subcommand("recv", "Receive messages from a destination over STOMP");
  command->add_option("DEST", args->destination,
                      "Destination, e.g. /queue/orders or /topic/prices (a bare name is a queue)")
      ->required();
  command->add_option("--count", args->count, "Messages to receive; 0 = until --timeout passes")
      ->capture_default_str();
  command->add_option("--timeout", args->timeout_s, "Seconds to wait for each next message")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_option("--ack", args->ack, "Ack mode")
      ->check(CLI::IsMember({"auto", "client", "client-individual"}))
      ->capture_default_str();
  command->add_option("--selector", args->selector, "Only messages matching this JMS selector");
  command->add_flag("--headers", args->headers, "Print each message's headers before its body");
  command->add_option("--server", args->server, "Broker STOMP address HOST:PORT, or ws://HOST:PORT/ws (wss:// over TLS) for STOMP over WebSocket")
      ->capture_default_str();
  command->add_option("--login", args->login, "Login");
  command->add_option("--passcode", args->passcode, "Passcode");
  add_tls_flags(command, args->tls);
  command->callback([args] { std::exit(run_recv(*args)); });
}

}  // namespace carrier::cli
