#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "federation/codec/limits.hpp"
#include "net/options.hpp"

namespace carrier::federation {

// One `[[federation.link]]`: a link this node opens (and reopens) to another node.
struct LinkOptions {
  std::string name;          // for the log and `carrier federation`
  std::string host;          // connect = "HOST:PORT"
  std::uint16_t port = 0;
  std::string username;      // checked against the far node's users; empty: none sent
  std::string password;
  std::int32_t cost = 1;     // asked for in negotiate
  // TLS to the far node's listener: its certificate must chain to tls.ca_file (the system's
  // CAs when empty) and name tls.server_name (else `host`); tls.cert_file/key_file: mutual TLS.
  net::TlsClientOptions tls;
};

// What is wrong with a link's TLS options (empty: nothing): checked for configured links and
// for those added at runtime alike, so a half-configured link is refused rather than dialled
// in clear text or without the client certificate its operator meant it to present.
inline std::string link_tls_problem(const net::TlsClientOptions& tls) {
  if (!tls.enabled && (!tls.ca_file.empty() || !tls.server_name.empty() || !tls.cert_file.empty() ||
                       !tls.key_file.empty())) {
    return "ca_file, server_name, cert_file and key_file need tls = true";
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) return "cert_file and key_file go together (mutual TLS)";
  return {};
}

// `[federation]` (docs/configuration.md); the listener itself is Config::federation_listener.
struct Options {
  std::vector<LinkOptions> links;
  // The listener speaks TLS only, with [tls] (and [tls.federation]) as the certificate.
  bool tls = false;
  // Hops a message may still take when it leaves its first node; also how far demand spreads.
  std::int32_t ttl = 5;
  // Message ids remembered to drop duplicates (rings, meshes, redelivery after a cut).
  std::uint32_t dedup_window = 100000;
  // Reconnect back-off: randomised, doubling from min to max.
  std::uint32_t reconnect_min_ms = 100;
  std::uint32_t reconnect_max_ms = 10000;
  // A link (TLS handshake, negotiate, establish) must be up within this, or it is dropped
  // (and, outbound, retried after the back-off).
  std::uint32_t establish_timeout_ms = 10000;
  // Refused frames a peer may send before the link is dropped (and, outbound, retried).
  std::uint32_t max_bad_frames = 10;
  // Pushes awaiting the far node's answer, per destination and link (the forwarding
  // consumer's prefetch).
  std::uint32_t max_in_flight = 100;
  // A topic's messages bound for a link wait in a durable subscription while the link is down;
  // one no link has attached to for this long is deleted with its messages.
  std::uint32_t topic_backlog_idle_ms = 3600000;
  // Ways back for replies (sendback) remembered, and how long an unused one is kept.
  std::uint32_t reply_routes = 10000;
  std::uint32_t reply_route_idle_ms = 600000;
  codec::Limits limits;
};

}  // namespace carrier::federation
