// carrier send: sends one body to a destination, N times, optionally waiting for receipts.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/tls_flags.hpp"
#include "client/server_address.hpp"
#include "client/stomp_client.hpp"
#include "cli/commands.hpp"

namespace carrier::cli {

namespace {

// Receipts in flight at once with --count: enough to cover the round trip to the store's group
// commit on loopback, small enough that a failing broker is noticed after few sends.
constexpr std::size_t kReceiptWindow = 256;

struct SendArgs {
  std::string destination;
  std::optional<std::string> body;
  std::optional<std::string> file;
  std::vector<std::string> headers;
  std::uint64_t count = 1;
  bool persistent = false;
  bool receipt = false;
  bool verbose = false;
  std::string server = "127.0.0.1:61613";
  std::string login;
  std::string passcode;
  net::TlsClientOptions tls;
  double timeout_s = 10;
};

int fail(const std::string& message) {
  std::fprintf(stderr, "carrier send: %s\n", message.c_str());
  return kExitFailure;
}

int usage(const std::string& message) {
  std::fprintf(stderr, "carrier send: %s\n", message.c_str());
  return kExitUsage;
}

std::optional<std::string> read_body(const SendArgs& args, std::string& error) {
  if (args.body) return *args.body;
  std::ostringstream out;
  if (args.file) {
    std::ifstream in(*args.file, std::ios::binary);
    if (!in) {
      error = "cannot open " + *args.file;
      return std::nullopt;
    }
    out << in.rdbuf();
    if (in.bad()) {
      error = "cannot read " + *args.file;
      return std::nullopt;
    }
    return std::move(out).str();
  }
  std::cin.sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// Sends `count` copies, keeping up to kReceiptWindow receipts in flight; stops issuing after
// the first failure and returns it once the outstanding ones are in.
Status send_confirmed(client::StompClient& client, const std::string& destination,
                      const std::string& body, const client::SendOptions& options,
                      std::uint64_t count, std::uint64_t& confirmed) {
  std::mutex mutex;
  std::condition_variable slot_free;
  std::size_t in_flight = 0;
  std::optional<Error> first_error;
  for (std::uint64_t i = 0; i < count; ++i) {
    {
      std::unique_lock lock(mutex);
      slot_free.wait(lock, [&] { return in_flight < kReceiptWindow || first_error; });
      if (first_error) break;
      ++in_flight;
    }
    client.async_send(destination, body, options, [&](Status status) {
      // Notified under the lock: once it is released the waiter may return and destroy these
      // locals, so this callback must not touch them after that.
      std::lock_guard lock(mutex);
      --in_flight;
      if (status) {
        ++confirmed;
      } else if (!first_error) {
        first_error = status.error();
      }
      slot_free.notify_all();
    });
  }
  std::unique_lock lock(mutex);
  // Every callback runs exactly once (receipt, ERROR, timeout or disconnect), so this ends.
  slot_free.wait(lock, [&] { return in_flight == 0; });
  if (first_error) return unexpected(*first_error);
  return ok();
}

int run_send(const SendArgs& args) {
  client::SendOptions options;
  for (const auto& header : args.headers) {
    auto eq = header.find('=');
    if (eq == std::string::npos || eq == 0) {
      return usage("--header wants NAME=VALUE, got '" + header + "'");
    }
    options.headers.emplace_back(header.substr(0, eq), header.substr(eq + 1));
  }
  if (args.persistent) options.headers.emplace_back("persistent", "true");
  // A persistent message is only safe once the broker says so: always confirm it.
  options.receipt = args.receipt || args.persistent;
  auto server = client::parse_server_address(args.server, 61613);
  if (!server) return usage("--server: " + server.error().detail);
  const auto* endpoint = &server->endpoint;

  std::string error;
  auto body = read_body(args, error);
  if (!body) return fail(error);
  const std::string destination = client::normalize_destination(args.destination);

  client::ConnectOptions connect_options;
  connect_options.login = args.login;
  connect_options.passcode = args.passcode;
  connect_options.tls = args.tls;
  connect_options.tls.enabled = args.tls.enabled || server->tls;  // wss://
  connect_options.websocket_path = server->websocket_path;
  connect_options.timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(args.timeout_s * 1000));
  client::StompClient client;
  if (auto s = client.connect(endpoint->host, endpoint->port, connect_options); !s) {
    return fail("cannot connect to " + args.server + ": " + s.error().to_string());
  }

  auto start = std::chrono::steady_clock::now();
  std::uint64_t done = 0;
  if (options.receipt) {
    auto sent = send_confirmed(client, destination, *body, options, args.count, done);
    if (!sent) {
      client.close();
      return fail(std::to_string(args.count - done) + " of " + std::to_string(args.count) +
                  " sends not confirmed: " + sent.error().to_string());
    }
  } else {
    for (; done < args.count; ++done) {
      if (auto s = client.send(destination, *body, options); !s) {
        return fail("send " + std::to_string(done + 1) + " of " + std::to_string(args.count) +
                    ": " + s.error().to_string());
      }
    }
  }
  // DISCONNECT's receipt comes after the broker handled every frame before it, so unconfirmed
  // sends are at least received by the broker before we exit 0.
  if (auto s = client.disconnect(); !s) return fail("disconnect: " + s.error().to_string());
  if (args.verbose) {
    auto elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start);
    std::fprintf(stderr, "sent %llu message(s) of %zu bytes to %s%s in %.3f s\n",
                 static_cast<unsigned long long>(done), body->size(), destination.c_str(),
                 options.receipt ? " (confirmed)" : "", elapsed.count());
  }
  return kExitOk;
}

}  // namespace

void add_send_command(CLI::App& app) {
  auto args = std::make_shared<SendArgs>();
  auto* command = app.add_subcommand("send", "Send a message to a destination over STOMP");
  command->add_option("DEST", args->destination,
                      "Destination, e.g. /queue/orders or /topic/prices (a bare name is a queue)")
      ->required();
  auto* body = command->add_option("--body", args->body, "Message body (default: read stdin)");
  auto* file = command->add_option("--file", args->file, "Read the message body from a file");
  body->excludes(file);
  command->add_option("--header", args->headers, "Extra header NAME=VALUE (repeatable)");
  command->add_option("--count", args->count, "Send the message this many times")
      ->check(CLI::PositiveNumber);
  command->add_flag("--persistent", args->persistent,
                    "Mark persistent and wait for the broker to confirm each send");
  command->add_flag("--receipt", args->receipt, "Wait for a receipt for each send");
  command->add_option("--server", args->server, "Broker STOMP address HOST:PORT, or ws://HOST:PORT/ws (wss:// over TLS) for STOMP over WebSocket")
      ->capture_default_str();
  command->add_option("--login", args->login, "Login");
  command->add_option("--passcode", args->passcode, "Passcode");
  add_tls_flags(command, args->tls);
  command->add_option("--timeout", args->timeout_s, "Seconds to wait to connect and per receipt")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  command->add_flag("-v,--verbose", args->verbose, "Report what was sent on stderr");
  command->callback([args] { std::exit(run_send(*args)); });
}

}  // namespace carrier::cli
