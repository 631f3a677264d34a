#include "cli/bench_options.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <cstdio>
#include <sstream>

#include "client/stomp_client.hpp"

namespace carrier::cli::bench {

namespace {

constexpr std::uint16_t kStompPort = 61613;
constexpr std::uint16_t kMqttPort = 1883;
constexpr std::uint16_t kHttpPort = 8080;  // ws-stomp, ws-mqtt: Carrier's HTTP listener

// One preset: the settings it fixes. Everything else keeps the defaults; explicit flags win.
struct PresetSettings {
  Preset preset;
  Protocol protocol;
  Kind kind;
  unsigned producers;
  unsigned consumers;
  std::size_t size;
  bool persistent;
  unsigned receipts;
  Ack ack;
  std::optional<unsigned> prefetch;
  unsigned qos;
  double rate;
};

// The prefetch every STOMP preset asks for, so each broker runs with the same credit (their
// defaults differ: ActiveMQ 1000, RabbitMQ unlimited, Carrier 1000 for auto and 100 for client).
constexpr unsigned kPresetPrefetch = 1000;

const std::vector<PresetSettings>& preset_table() {
  static const std::vector<PresetSettings> table = {
      {{"S1", "STOMP queue 1 -> 1, ack auto, 1 KiB, non-persistent"},
       Protocol::stomp, Kind::queue, 1, 1, 1024, false, 0, Ack::automatic, kPresetPrefetch, 0, 0},
      {{"S2", "STOMP queue 1 -> 1, 1000 receipts in flight, ack client-individual, 1 KiB, persistent"},
       Protocol::stomp, Kind::queue, 1, 1, 1024, true, 1000, Ack::client_individual, kPresetPrefetch, 0, 0},
      {{"S3", "STOMP topic 1 -> 4 subscribers, 1 KiB, non-persistent"},
       Protocol::stomp, Kind::topic, 1, 4, 1024, false, 0, Ack::automatic, kPresetPrefetch, 0, 0},
      {{"S4", "STOMP queue 4 -> 4, ack auto, 256 B, non-persistent"},
       Protocol::stomp, Kind::queue, 4, 4, 256, false, 0, Ack::automatic, kPresetPrefetch, 0, 0},
      {{"M1", "MQTT 1 -> 1, QoS 0, 1 KiB"},
       Protocol::mqtt, Kind::topic, 1, 1, 1024, false, 0, Ack::automatic, std::nullopt, 0, 0},
      {{"M2", "MQTT 1 -> 1, QoS 1, 1000 in flight, 1 KiB"},
       Protocol::mqtt, Kind::topic, 1, 1, 1024, false, 1000, Ack::automatic, std::nullopt, 1, 0},
      {{"M3", "MQTT topic 1 -> 4 subscribers, QoS 0, 256 B"},
       Protocol::mqtt, Kind::topic, 1, 4, 256, false, 0, Ack::automatic, std::nullopt, 0, 0},
      {{"L1", "STOMP queue 1 -> 1 at a fixed 5000 msg/s, 1 KiB, ack auto (latency)"},
       Protocol::stomp, Kind::queue, 1, 1, 1024, false, 0, Ack::automatic, kPresetPrefetch, 0, 5000},
      {{"L2", "MQTT 1 -> 1 at a fixed 5000 msg/s, 1 KiB, QoS 0 (latency)"},
       Protocol::mqtt, Kind::topic, 1, 1, 1024, false, 0, Ack::automatic, std::nullopt, 0, 5000},
  };
  return table;
}

Unexpected bad(std::string detail) { return unexpected(Errc::invalid_argument, std::move(detail)); }

std::string upper(std::string text) {
  for (auto& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::string format_number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

std::string_view to_string(Protocol protocol) {
  switch (protocol) {
    case Protocol::stomp: return "stomp";
    case Protocol::mqtt: return "mqtt";
    case Protocol::http: return "http";
  }
  return "stomp";
}
std::string_view to_string(Kind kind) { return kind == Kind::queue ? "queue" : "topic"; }
std::string_view to_string(Ack ack) {
  switch (ack) {
    case Ack::automatic: return "auto";
    case Ack::client: return "client";
    case Ack::client_individual: return "client-individual";
  }
  return "auto";
}

const std::vector<Preset>& presets() {
  static const std::vector<Preset> list = [] {
    std::vector<Preset> out;
    for (const auto& p : preset_table()) out.push_back(p.preset);
    return out;
  }();
  return list;
}

std::string Options::server() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::string Options::protocol_name() const {
  return (websocket ? "ws-" : "") + std::string(to_string(protocol));
}

std::string Options::command_line() const {
  std::ostringstream out;
  out << "carrier bench --protocol " << protocol_name() << " --server " << server();
  if (consumer_host != host || consumer_port != port) {
    out << " --consumer-server "
        << (consumer_host.find(':') != std::string::npos ? "[" + consumer_host + "]" : consumer_host) << ":"
        << consumer_port;
  }
  out << " --producers " << producers << " --consumers " << consumers;
  if (count > 0) {
    out << " --count " << count;
  } else {
    out << " --duration " << format_number(duration_s);
  }
  out << " --size " << size << " --dest " << dest << " --kind " << to_string(kind);
  if (protocol == Protocol::stomp) {
    out << " --ack " << to_string(ack);
    if (prefetch) out << " --prefetch " << *prefetch;
    if (persistent) out << " --persistent";
    if (!vhost.empty()) out << " --vhost " << vhost;
  } else if (protocol == Protocol::http) {
    if (prefetch) out << " --prefetch " << *prefetch;
    if (persistent) out << " --persistent";
  } else {
    out << " --qos " << qos;
    if (mqtt_v5) out << " --mqtt-version 5";
  }
  if (tls.enabled) out << " --tls";
  if (!tls.ca_file.empty()) out << " --ca " << tls.ca_file;
  if (!tls.cert_file.empty()) out << " --cert " << tls.cert_file << " --key " << tls.key_file;
  if (receipts > 0) out << " --receipts " << receipts;
  if (rate > 0) out << " --rate " << format_number(rate);
  return out.str();
}

Result<Options> resolve(const RawOptions& raw, std::uint32_t run_id) {
  Options o;
  o.run_id = run_id;
  if (raw.preset) {
    const std::string name = upper(*raw.preset);
    const PresetSettings* found = nullptr;
    for (const auto& p : preset_table()) {
      if (p.preset.name == name) found = &p;
    }
    if (found == nullptr) return bad("unknown --preset " + *raw.preset + " (S1 S2 S3 S4 M1 M2 M3 L1 L2)");
    o.preset = name;
    o.protocol = found->protocol;
    o.kind = found->kind;
    o.producers = found->producers;
    o.consumers = found->consumers;
    o.size = found->size;
    o.persistent = found->persistent;
    o.receipts = found->receipts;
    o.ack = found->ack;
    o.prefetch = found->prefetch;
    o.qos = found->qos;
    o.rate = found->rate;
  }
  if (raw.protocol) {
    const std::string_view name = *raw.protocol;
    o.websocket = name.substr(0, 3) == "ws-";
    const std::string_view base = o.websocket ? name.substr(3) : name;
    if (base == "stomp") {
      o.protocol = Protocol::stomp;
    } else if (base == "mqtt") {
      o.protocol = Protocol::mqtt;
    } else if (name == "http") {
      o.protocol = Protocol::http;
    } else {
      return bad("--protocol must be stomp, mqtt, http, ws-stomp or ws-mqtt, got " + *raw.protocol);
    }
  }
  const bool stomp = o.protocol == Protocol::stomp;
  const bool http = o.protocol == Protocol::http;
  if (raw.kind) {
    if (*raw.kind == "queue") {
      o.kind = Kind::queue;
    } else if (*raw.kind == "topic") {
      o.kind = Kind::topic;
    } else {
      return bad("--kind must be queue or topic, got " + *raw.kind);
    }
  }
  if (raw.producers) o.producers = *raw.producers;
  if (raw.consumers) o.consumers = *raw.consumers;
  if (o.producers == 0) return bad("--producers must be at least 1");
  if (o.producers > 1000 || o.consumers > 1000) return bad("--producers and --consumers are at most 1000");
  if (raw.count && raw.duration_s) return bad("--count and --duration exclude each other");
  if (raw.count) {
    if (*raw.count < o.producers) return bad("--count must be at least --producers (one message each)");
    o.count = *raw.count;
  }
  if (raw.duration_s) {
    if (!(*raw.duration_s > 0)) return bad("--duration must be positive");
    o.duration_s = *raw.duration_s;
  }
  if (raw.size) o.size = *raw.size;
  if (o.size < kStampSize) {
    return bad("--size must be at least " + std::to_string(kStampSize) + " (the stamp every message carries)");
  }
  if (o.size > (64u << 20)) return bad("--size is at most 64 MiB");
  if (raw.persistent) o.persistent = true;
  if (raw.receipts) o.receipts = *raw.receipts;
  if (raw.ack) {
    if (*raw.ack == "auto") {
      o.ack = Ack::automatic;
    } else if (*raw.ack == "client") {
      o.ack = Ack::client;
    } else if (*raw.ack == "client-individual") {
      o.ack = Ack::client_individual;
    } else {
      return bad("--ack must be auto, client or client-individual, got " + *raw.ack);
    }
  }
  if (raw.prefetch) o.prefetch = *raw.prefetch;
  if (raw.qos) o.qos = *raw.qos;
  if (o.qos > 2) return bad("--qos must be 0, 1 or 2");
  if (raw.rate) {
    if (!(*raw.rate > 0)) return bad("--rate must be positive");
    o.rate = *raw.rate;
  }
  if (raw.drain_timeout_s) {
    if (!(*raw.drain_timeout_s > 0)) return bad("--drain-timeout must be positive");
    o.drain_timeout_s = *raw.drain_timeout_s;
  }
  if (raw.drain_limit_s) {
    if (!(*raw.drain_limit_s > 0)) return bad("--drain-limit must be positive");
    o.drain_limit_s = *raw.drain_limit_s;
  }
  if (raw.mqtt_version) {
    if (*raw.mqtt_version == "5" || *raw.mqtt_version == "5.0") {
      o.mqtt_v5 = true;
    } else if (*raw.mqtt_version == "3.1.1" || *raw.mqtt_version == "4") {
      o.mqtt_v5 = false;
    } else {
      return bad("--mqtt-version must be 3.1.1 or 5, got " + *raw.mqtt_version);
    }
  }
  if (stomp || http) {
    if (raw.qos) return bad("--qos is for --protocol mqtt (STOMP: --receipts, --ack, --persistent)");
    if (raw.mqtt_version) return bad("--mqtt-version is for --protocol mqtt");
  }
  if (http) {
    // Producers POST to a queue and consumers long-poll it (ack=auto).
    if (o.kind != Kind::queue) return bad("--protocol http runs with --kind queue (consumers long-poll a queue)");
    if (raw.ack) return bad("--ack is for --protocol stomp (an HTTP long poll acknowledges on write)");
    if (raw.vhost) return bad("--vhost is for --protocol stomp");
    if (o.receipts > 10000) return bad("--receipts with HTTP (requests pipelined per producer) is at most 10000");
  } else if (!stomp) {
    if (raw.ack) return bad("--ack is for --protocol stomp (MQTT acknowledges by --qos)");
    if (raw.prefetch) return bad("--prefetch is for --protocol stomp");
    if (o.persistent) return bad("--persistent is for --protocol stomp (MQTT: --qos 1 or 2)");
    if (o.qos == 0 && raw.receipts && *raw.receipts > 0) {
      return bad("--receipts with MQTT is the QoS 1/2 in-flight window; it needs --qos 1 or 2");
    }
    if (o.qos > 0 && o.receipts == 0) o.receipts = 1000;
    if (o.qos == 0) o.receipts = 0;
    if (o.receipts > 65534) return bad("--receipts with MQTT is at most 65534 (packet ids)");
  }

  const std::uint16_t default_port = o.websocket || http ? kHttpPort : stomp ? kStompPort : kMqttPort;
  auto endpoint = client::parse_endpoint(raw.server.value_or("127.0.0.1"), default_port);
  if (!endpoint) return bad("--server: " + endpoint.error().detail);
  o.host = endpoint->host;
  o.port = endpoint->port;
  o.consumer_host = o.host;
  o.consumer_port = o.port;
  if (raw.consumer_server) {
    if (http) return bad("--consumer-server is for --protocol stomp and mqtt");
    auto consumers_at = client::parse_endpoint(*raw.consumer_server, default_port);
    if (!consumers_at) return bad("--consumer-server: " + consumers_at.error().detail);
    o.consumer_host = consumers_at->host;
    o.consumer_port = consumers_at->port;
  }

  char run_hex[16];
  std::snprintf(run_hex, sizeof run_hex, "%08x", run_id);
  if (raw.dest) {
    if (raw.dest->empty()) return bad("--dest must not be empty");
    if (http && raw.dest->find_first_of("/?#%*> ") != std::string::npos) {
      return bad("--dest is a queue name in a URL here (levels separated by '.')");
    }
    if (stomp && !raw.dest->starts_with('/')) {
      o.dest = std::string(o.kind == Kind::queue ? "/queue/" : "/topic/") + *raw.dest;
    } else {
      o.dest = *raw.dest;
    }
  } else if (stomp) {
    o.dest = std::string(o.kind == Kind::queue ? "/queue/" : "/topic/") + "carrier-bench-" + run_hex;
  } else if (http) {
    o.dest = std::string("carrier-bench-") + run_hex;
  } else {
    o.dest = std::string("carrier-bench/") + run_hex;
  }
  if (o.protocol == Protocol::mqtt && (o.dest.find_first_of("+#") != std::string::npos)) {
    return bad("--dest is an MQTT topic name here: no wildcards");
  }
  if (raw.vhost) {
    if (!stomp) return bad("--vhost is for --protocol stomp");
    o.vhost = *raw.vhost;
  }
  o.login = raw.login;
  o.tls = raw.tls;
  o.passcode = raw.passcode;
  o.json = raw.json;
  o.quiet = raw.quiet;
  return o;
}

bool is_loopback(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  if (getaddrinfo(host.c_str(), nullptr, &hints, &list) != 0 || list == nullptr) return false;
  bool all_loopback = true;
  for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      if ((ntohl(in->sin_addr.s_addr) >> 24) != 127) all_loopback = false;
    } else if (a->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) all_loopback = false;
    } else {
      all_loopback = false;
    }
  }
  freeaddrinfo(list);
  return all_loopback;
}

}  // namespace carrier::cli::bench
