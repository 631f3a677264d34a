#include "cli/federation.hpp"

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <variant>

#include "config/config.hpp"
#include "federation/codec/decoder.hpp"
#include "federation/codec/frame.hpp"
#include "federation/node_id.hpp"
#include "net/asio.hpp"

namespace carrier::cli {

namespace {

namespace codec = federation::codec;

struct FederationFlags {
  std::string connect;
  std::string target;
  std::string selector;
  std::string username;
};

// One request, then its answer (a blocking exchange: the CLI holds nothing else).
Result<codec::Frame> exchange(net::tcp::socket& socket, std::string& input, const codec::Frame& request) {
  std::string out;
  if (auto st = codec::encode_frame(request, out); !st) return unexpected(st.error());
  boost::system::error_code ec;
  net::asio::write(socket, net::asio::buffer(out), ec);
  if (ec) return unexpected(Errc::io_error, "cannot write: " + ec.message());
  const codec::Limits limits;
  while (true) {
    auto step = codec::decode(input, limits);
    if (!step) return unexpected(step.error());
    if (!step->need_more()) {
      input.erase(0, step->consumed);
      if (step->frame && step->frame->request_id == request.request_id) return std::move(*step->frame);
      continue;  // anything else (a push, an establish) is not for the CLI
    }
    char buffer[4096];
    const std::size_t n = socket.read_some(net::asio::buffer(buffer), ec);
    if (ec) return unexpected(Errc::io_error, "the node closed the link: " + ec.message());
    input.append(buffer, n);
  }
}

std::string answer_text(const codec::Frame& frame) {
  if (const auto* text = std::get_if<codec::StringResult>(&frame.body)) return text->text;
  return "ok";
}

int run(const FederationFlags& flags, bool stop) {
  net::ListenerOptions where;
  if (auto st = config::parse_listen(flags.connect, "--connect", where); !st || !where.enabled) {
    std::cerr << "carrier federation: --connect: expected HOST:PORT\n";
    return 2;
  }
  auto target = federation::from_hex(flags.target);
  if (!target) {
    std::cerr << "carrier federation: --target: " << target.error().detail << "\n";
    return 2;
  }
  net::asio::io_context io(1);
  net::tcp::socket socket(io);
  boost::system::error_code ec;
  socket.connect(net::tcp::endpoint(net::asio::ip::make_address(where.host, ec), where.port), ec);
  if (ec) {
    std::cerr << "carrier federation: cannot connect to " << flags.connect << ": " << ec.message() << "\n";
    return 1;
  }
  std::string input;
  auto negotiated = exchange(socket, input, codec::Frame{1, codec::NegotiateRequest{}});
  if (!negotiated || !std::holds_alternative<codec::NegotiateResult>(negotiated->body)) {
    std::cerr << "carrier federation: negotiate failed: "
              << (negotiated ? answer_text(*negotiated) : negotiated.error().detail) << "\n";
    return 1;
  }
  // A node id of its own, new each time: the CLI is a short-lived link with no demand.
  codec::EstablishRequest hello;
  std::random_device random;
  for (auto& b : hello.from.node_id.bytes) b = static_cast<std::uint8_t>(random());
  hello.from.property.entries = {{"selectors", {}}, {"distances", {}}};
  if (!flags.username.empty()) {
    const char* password = std::getenv("CARRIER_FEDERATION_PASSWORD");
    hello.from.property.entries.push_back({"user", {flags.username}});
    hello.from.property.entries.push_back({"password", {password != nullptr ? password : ""}});
  }
  auto established = exchange(socket, input, codec::Frame{2, std::move(hello)});
  if (!established || !std::holds_alternative<codec::EstablishResult>(established->body)) {
    std::cerr << "carrier federation: establish failed: "
              << (established ? answer_text(*established) : established.error().detail) << "\n";
    return 1;
  }
  codec::FrameBody control;
  if (stop) {
    control = codec::StopForwardingRequest{*target, flags.selector};
  } else {
    control = codec::RestartForwardingRequest{*target, flags.selector};
  }
  auto answer = exchange(socket, input, codec::Frame{3, std::move(control)});
  if (!answer) {
    std::cerr << "carrier federation: " << answer.error().detail << "\n";
    return 1;
  }
  const auto text = answer_text(*answer);
  std::cout << text << "\n";
  return text.starts_with("ok") ? 0 : 1;
}

}  // namespace

void add_federation_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("federation", "Control a running node's federation links");
  cmd->require_subcommand(1);
  for (const bool stop : {true, false}) {
    auto flags = std::make_shared<FederationFlags>();
    auto* sub = cmd->add_subcommand(stop ? "stop" : "restart",
                                    stop ? "Pause forwarding of a destination to a node (stopForwarding)"
                                         : "Resume forwarding of a destination to a node (restartForwarding)");
    sub->add_option("--connect", flags->connect, "The node's federation listener, HOST:PORT")->required();
    sub->add_option("--target", flags->target, "The node forwarded to: its id, 32 hex digits")->required();
    sub->add_option("--selector", flags->selector, "A destination key (queue:orders, topic:prices.>) or *")
        ->required();
    sub->add_option("--username", flags->username,
                    "A user of the node ([auth]); password from $CARRIER_FEDERATION_PASSWORD");
    sub->callback([flags, stop] { std::exit(run(*flags, stop)); });
  }
  add_federation_link_commands(*cmd);
}

}  // namespace carrier::cli
