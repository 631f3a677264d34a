#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace carrier::net {

// Where a protocol listens. `enabled = false` is spelled "off" in flags and TOML.
struct ListenerOptions {
  bool enabled = true;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

// What a session does with a delivery it may drop — a non-persistent message for a private
// (non-durable, unshared) topic subscription acknowledged once written: STOMP ack:auto, MQTT
// QoS 0 — when its connection's output is over `max_pending_output_bytes`. Any other delivery
// waits in the core instead (its queue's credit and limits bound it).
enum class SlowConsumerPolicy : std::uint8_t {
  drop,        // the message is skipped for this subscriber and counted
  disconnect,  // the connection is closed (STOMP: ERROR "slow consumer"), as NATS does
};

// Whether a TLS listener asks clients for a certificate (mutual TLS).
enum class ClientCertificates : std::uint8_t {
  none,      // not asked for
  optional,  // asked for; one that does not verify fails the handshake, none is fine
  required,  // a client without a verified certificate fails the handshake
};

// A TLS listener's certificate and what it asks of clients ([tls], docs/security.md). Files
// are PEM; the key must match the certificate. Read at start-up and again on SIGHUP.
struct TlsOptions {
  std::string cert_file;  // the server's certificate, chain included
  std::string key_file;   // its private key (unencrypted)
  std::string ca_file;    // the CAs a client certificate must chain to (mutual TLS)
  ClientCertificates client_certificates = ClientCertificates::none;
  // A verified client certificate's subject CN (or first subjectAltName) is the user, with no
  // password check (Mosquitto's option of the same name).
  bool use_identity_as_username = false;
};

// What a client (carrier send/recv/bench, a federation link) verifies and presents over TLS.
struct TlsClientOptions {
  bool enabled = false;
  std::string ca_file;      // the CAs the server's certificate must chain to; empty: the system's
  std::string cert_file;    // a client certificate (mutual TLS), with its key_file
  std::string key_file;
  std::string server_name;  // the name the certificate must carry; empty: the host connected to
};

// Connections per source address and in total, over every listener ([limits], docs/security.md).
// A connection past one is answered in its protocol's words and closed.
struct SourceLimits {
  std::size_t max_connections = 60'000;            // open connections of all sources together
  std::size_t max_connections_per_source = 100;    // open connections of one address
  std::uint32_t connection_rate_per_source = 20;   // new connections a second one address may open; 0: off
  std::uint32_t connection_burst_per_source = 40;  // ... of which this many at once (the bucket's size)
  std::size_t max_sources = 10'000;                // addresses whose rate is remembered (least recent go first)
  // Loopback clients (the machine's own tools, sidecars, `carrier bench`) count in the total
  // only, not per address or rate.
  bool exempt_loopback = true;
};

struct Options {
  unsigned shards = 0;  // 0: one per core
  // Connections (STOMP and MQTT together) that have not completed CONNECT, password check
  // included; a connection past this is refused at once (docs/configuration.md).
  std::size_t max_connecting = 1000;
  SourceLimits sources;
};

}  // namespace carrier::net
