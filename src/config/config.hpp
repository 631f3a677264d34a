#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "admin/options.hpp"
#include "auth/options.hpp"
#include "base/result.hpp"
#include "core/options.hpp"
#include "federation/options.hpp"
#include "http/options.hpp"
#include "mqtt/options.hpp"
#include "net/options.hpp"
#include "stomp/options.hpp"
#include "store/store.hpp"

namespace carrier::config {

// [tls] and its per-listener tables [tls.stomp], [tls.mqtt], [tls.http]: a key set in a
// listener's table replaces [tls]'s for that listener (docs/security.md).
struct TlsSection {
  struct Keys {
    std::optional<std::string> cert_file, key_file, ca_file;
    std::optional<net::ClientCertificates> client_certificates;
    std::optional<bool> use_identity_as_username;
  };
  Keys all;                                        // [tls]
  std::map<std::string, Keys, std::less<>> listener;  // [tls.NAME], NAME a protocol
  // What the TLS listener of `protocol` ("stomp") runs with.
  net::TlsOptions for_listener(std::string_view protocol) const;
};

// Everything `carrier serve` runs with: each module's own Options, filled once, here.
struct Config {
  std::string log_level = "info";
  std::string log_format = "text";  // [log] format: text | json (one JSON object per line)
  net::Options net;
  net::ListenerOptions stomp_listener{true, "127.0.0.1", 61613};
  stomp::Options stomp;
  net::ListenerOptions mqtt_listener{true, "127.0.0.1", 1883};
  mqtt::Options mqtt;
  net::ListenerOptions http_listener{true, "127.0.0.1", 8080};
  http::Options http;
  // The TLS listeners (off unless set; their usual ports) and their certificates.
  net::ListenerOptions stomp_tls_listener{false, "127.0.0.1", 61614};
  net::ListenerOptions mqtt_tls_listener{false, "127.0.0.1", 8883};
  net::ListenerOptions http_tls_listener{false, "127.0.0.1", 8443};
  TlsSection tls;
  core::Options core;
  store::Options store;  // store.data_dir is the data directory
  auth::Options auth;    // load() has added the users file's users to auth.users
  admin::Options admin;
  admin::MetricsOptions metrics;
  net::ListenerOptions federation_listener{false, "127.0.0.1", 61700};  // off unless asked for
  federation::Options federation;
};

// What the command line said; each set field overrides the file.
struct Flags {
  std::optional<std::filesystem::path> config_file;
  std::optional<std::string> stomp;      // "HOST:PORT" or "off"
  std::optional<std::string> mqtt;       // "HOST:PORT" or "off"
  std::optional<std::string> http;       // "HOST:PORT" or "off"
  std::optional<std::string> stomp_tls;  // "HOST:PORT" or "off": STOMP over TLS
  std::optional<std::string> mqtt_tls;   // "HOST:PORT" or "off": MQTT over TLS
  std::optional<std::string> https;      // "HOST:PORT" or "off": HTTP over TLS
  std::optional<std::string> data_dir;
  std::optional<std::string> store;      // store kind
  std::optional<std::string> postgres;   // libpq connection string for store "postgres"
  std::optional<unsigned> shards;
  std::optional<std::string> log_level;
  std::optional<std::string> log_format;  // "text" | "json"
  std::optional<std::string> recover;    // "strict" | "skip-corrupt"
  std::optional<std::string> federation;  // "HOST:PORT" or "off"
};

// Defaults, then the TOML file (if any), then the flags, then the users file that [auth]
// names (a relative path is taken from the config file's directory). An unknown key or a bad
// value is an Errc::invalid_argument whose detail names the key (and the file and line for
// TOML, or the users file and line).
Result<Config> load(const Flags& flags);
// [core] memory_budget_bytes when the file sets none: a quarter of the machine's physical
// memory (sysconf), read once per load.
std::uint64_t default_memory_budget_bytes();

// Parses the TOML text alone (exposed for tests and the config fuzz target).
Result<Config> parse_toml(std::string_view text, std::string_view source_name);

// "HOST:PORT" or "off" into ListenerOptions; `key` names the setting in errors.
Status parse_listen(std::string_view text, std::string_view key, net::ListenerOptions& out);

}  // namespace carrier::config
