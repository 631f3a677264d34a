#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "net/options.hpp"

namespace carrier::cli::bench {

enum class Protocol { stomp, mqtt, http };
enum class Kind { queue, topic };
enum class Ack { automatic, client, client_individual };

std::string_view to_string(Protocol protocol);
std::string_view to_string(Kind kind);
std::string_view to_string(Ack ack);

// What the command line said: every setting optional, so a preset fills what was not given.
struct RawOptions {
  std::optional<std::string> preset;
  std::optional<std::string> protocol;
  std::optional<std::string> server;
  std::optional<std::string> consumer_server;  // consumers elsewhere (a federation's far node)
  std::optional<unsigned> producers;
  std::optional<unsigned> consumers;
  std::optional<std::uint64_t> count;
  std::optional<double> duration_s;
  std::optional<std::size_t> size;
  std::optional<std::string> dest;
  std::optional<std::string> kind;
  bool persistent = false;
  std::optional<unsigned> receipts;
  std::optional<std::string> ack;
  std::optional<unsigned> prefetch;
  std::optional<unsigned> qos;
  std::optional<double> rate;
  std::optional<double> drain_timeout_s;
  std::optional<double> drain_limit_s;
  std::optional<std::string> mqtt_version;
  std::string login;
  std::string passcode;
  std::optional<std::string> vhost;
  net::TlsClientOptions tls;
  bool allow_remote = false;
  bool json = false;
  bool quiet = false;
};

// A resolved run: defaults < preset < explicit flags, validated.
struct Options {
  std::string preset;  // empty: none
  Protocol protocol = Protocol::stomp;
  bool websocket = false;  // --protocol ws-stomp / ws-mqtt: over an HTTP listener's GET /ws
  std::string host = "127.0.0.1";
  std::uint16_t port = 61613;
  // Where consumers connect: the --server unless --consumer-server says otherwise (a message
  // produced on one node of a federation and consumed on another).
  std::string consumer_host = "127.0.0.1";
  std::uint16_t consumer_port = 61613;
  unsigned producers = 1;
  unsigned consumers = 1;
  std::uint64_t count = 0;   // messages in total over all producers; 0: run for duration_s
  double duration_s = 10;
  std::size_t size = 1024;   // message body bytes, the 32-byte stamp included
  std::string dest;          // STOMP destination ("/queue/x", "/topic/x") or MQTT topic
  Kind kind = Kind::queue;
  bool persistent = false;
  unsigned receipts = 0;     // confirmed window: sends in flight awaiting RECEIPT / PUBACK
  Ack ack = Ack::automatic;
  std::optional<unsigned> prefetch;
  unsigned qos = 0;
  double rate = 0;           // total offered msg/s over all producers; 0: as fast as possible
  double drain_timeout_s = 10;   // give up draining after this long without a delivery
  double drain_limit_s = 60;     // ... or after this long in all (a broker delivering a trickle)
  bool mqtt_v5 = false;
  std::string login;
  std::string passcode;
  std::string vhost;         // STOMP CONNECT `host` header; empty: the --server host
  net::TlsClientOptions tls;  // every connection over TLS when enabled
  bool json = false;
  bool quiet = false;
  std::uint32_t run_id = 0;  // stamped in every message; messages of other runs are ignored

  std::string server() const;  // "host:port"
  // "stomp", "mqtt", "ws-stomp", "ws-mqtt": the --protocol value.
  std::string protocol_name() const;
  // The command line that reproduces this run (explicit flags, no preset), for reports.
  std::string command_line() const;
};

// The message stamp at the front of each body: magic, run id, producer, sequence, send time.
inline constexpr std::size_t kStampSize = 32;

struct Preset {
  std::string_view name;
  std::string_view summary;
};
const std::vector<Preset>& presets();

// Applies defaults, then the preset, then explicit options; checks ranges and combinations.
// Errc::invalid_argument with the reason on a bad combination. Does not resolve host names.
Result<Options> resolve(const RawOptions& raw, std::uint32_t run_id);

// Whether `host` names only loopback addresses (literal 127/8 or ::1, or a name resolving only
// to those).
bool is_loopback(const std::string& host);

}  // namespace carrier::cli::bench
