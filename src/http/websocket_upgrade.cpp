// GET /ws: the WebSocket handshake (RFC 6455 section 4.2) and the hand-over of the connection
// to a STOMP or MQTT session carried by a WebSocketTransport.

#include <array>

#include <fmt/format.h>

#include <boost/beast/websocket/detail/hybi13.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include "base/logging.hpp"
#include "http/codec/body_encoding.hpp"
#include "http/session.hpp"
#include "http/websocket_transport.hpp"
#include "protocol/protocol_set.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// The sub-protocols offered on /ws and the protocol that runs each: STOMP over WebSocket as
// stomp.js and RabbitMQ's web-stomp name it, MQTT as MQTT 5.0 / 3.1.1 section 6 does.
struct SubProtocol {
  std::string_view name;
  std::string_view protocol;
};
constexpr std::array<SubProtocol, 4> kSubProtocols{{
    {"v12.stomp", "stomp"},
    {"v11.stomp", "stomp"},
    {"v10.stomp", "stomp"},
    {"mqtt", "mqtt"},
}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The first of the client's offers (in its order of preference) that Carrier speaks.
const SubProtocol* choose(std::string_view offered) {
  while (!offered.empty()) {
    const auto comma = offered.find(',');
    const auto name = trim(offered.substr(0, comma));
    for (const auto& p : kSubProtocols) {
      if (boost::beast::iequals(boost::beast::string_view(name.data(), name.size()),
                                boost::beast::string_view(p.name.data(), p.name.size()))) {
        return &p;
      }
    }
    if (comma == std::string_view::npos) break;
    offered.remove_prefix(comma + 1);
  }
  return nullptr;
}

}  // namespace

bool Session::wants_websocket() const {
  const auto target = view(current_->target());
  return target == "/ws" || target.substr(0, 4) == "/ws?";
}

void Session::upgrade_websocket() {
  const Request& req = *current_;
  if (req.method() != bhttp::verb::get) {
    problem(405, "/ws takes a WebSocket upgrade (GET)", "Allow: GET\r\n");
    return;
  }
  if (!boost::beast::websocket::is_upgrade(req)) {
    problem(426, "/ws is a WebSocket endpoint: send Connection: Upgrade and Upgrade: websocket",
            "Upgrade: websocket\r\n");
    return;
  }
  if (view(req[bhttp::field::sec_websocket_version]) != "13") {
    problem(426, "only WebSocket version 13 (RFC 6455) is supported", "Sec-WebSocket-Version: 13\r\n");
    return;
  }
  const auto key = view(req[bhttp::field::sec_websocket_key]);
  const auto decoded_key = codec::base64_decode(key);
  if (!decoded_key || decoded_key->size() != 16) {
    problem(400, "Sec-WebSocket-Key must be 16 bytes in base64");
    return;
  }
  const SubProtocol* sub = choose(view(req[bhttp::field::sec_websocket_protocol]));
  protocol::Protocol* runs = sub != nullptr && protocols_ != nullptr ? protocols_->find(sub->protocol) : nullptr;
  if (runs == nullptr) {
    problem(400, "no supported WebSocket sub-protocol in Sec-WebSocket-Protocol: offer v12.stomp, v11.stomp, "
                 "v10.stomp or mqtt");
    return;
  }

  boost::beast::websocket::detail::sec_ws_accept_type accept;
  boost::beast::websocket::detail::make_sec_ws_accept(accept, boost::beast::string_view(key.data(), key.size()));
  fmt::format_to(std::back_inserter(out()),
                 "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {}\r\n\r\n",
                 std::string_view(accept.data(), accept.size()), sub->name);
  flush();
  logging::get("http")->debug("{} upgraded to WebSocket ({})", log_prefix(), sub->name);

  // From here the connection is the WebSocket's: this session stays in `handling` (no further
  // request is parsed, no timer runs) and only keeps the WebSocket alive for the connection.
  deadline_.cancel();
  current_.reset();
  codec::WsDecodeLimits limits;
  limits.max_frame_bytes = runs->max_frame_bytes();
  limits.binary_only = sub->protocol == "mqtt";
  auto ws = std::make_shared<WebSocketTransport>(shared_transport(), fmt::format("ws-{}", sub->protocol), limits);
  ws->attach();
  // The protocol's own session, exactly as over TCP; its CONNECT timeout and handshake limit apply.
  auto session = runs->start_session(ws, shard());
  if (!session) {
    ws->close();
    return;
  }
  ws->hold(std::move(session));
  websocket_ = std::move(ws);
}

}  // namespace carrier::http
