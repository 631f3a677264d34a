// Reading the configuration: the file (its keys are in config.cpp), then the command-line flags
// over it, then the files it names (users, tokens, ACL, TLS), checked together.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "auth/acl.hpp"
#include "auth/token_file.hpp"
#include "auth/user_file.hpp"
#include "auth/user_syntax.hpp"
#include "config/config.hpp"
#include "config/field.hpp"
#include "config/toml_keys.hpp"

namespace carrier::config {
namespace {

Result<std::string> read_file(const std::filesystem::path& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) {
    const int err = errno;
    return unexpected(err == ENOENT ? Errc::not_found : Errc::io_error,
                      fmt::format("cannot read config file {}: {}", path.string(), std::strerror(err)));
  }
  std::string text;
  char buffer[8192];
  while (true) {
    const std::size_t n = std::fread(buffer, 1, sizeof buffer, file.get());
    text.append(buffer, n);
    if (n < sizeof buffer) break;
  }
  if (std::ferror(file.get())) {
    const int err = errno;
    return unexpected(Errc::io_error,
                      fmt::format("cannot read config file {}: {}", path.string(), std::strerror(err)));
  }
  return text;
}

Unexpected bad_flag(std::string_view flag, std::string_view expected, std::string_view got) {
  return unexpected(Errc::invalid_argument, fmt::format("{}: expected {}, got {}", flag, expected, in_quotes(got)));
}

Status apply_flags(const Flags& flags, Config& config) {
  if (flags.stomp) {
    if (auto s = parse_listen(*flags.stomp, "--stomp", config.stomp_listener); !s) return s;
  }
  if (flags.mqtt) {
    if (auto s = parse_listen(*flags.mqtt, "--mqtt", config.mqtt_listener); !s) return s;
  }
  if (flags.http) {
    if (auto s = parse_listen(*flags.http, "--http", config.http_listener); !s) return s;
  }
  if (flags.stomp_tls) {
    if (auto s = parse_listen(*flags.stomp_tls, "--stomp-tls", config.stomp_tls_listener); !s) return s;
  }
  if (flags.mqtt_tls) {
    if (auto s = parse_listen(*flags.mqtt_tls, "--mqtt-tls", config.mqtt_tls_listener); !s) return s;
  }
  if (flags.https) {
    if (auto s = parse_listen(*flags.https, "--https", config.http_tls_listener); !s) return s;
  }
  if (flags.federation) {
    if (auto s = parse_listen(*flags.federation, "--federation", config.federation_listener); !s) return s;
  }
  if (flags.data_dir) {
    if (flags.data_dir->empty()) return bad_flag("--data-dir", "a directory", *flags.data_dir);
    config.store.data_dir = *flags.data_dir;
  }
  if (flags.store) {
    if (!is_one_of(*flags.store, kStoreKinds)) return bad_flag("--store", join(kStoreKinds, " or "), *flags.store);
    config.store.kind = *flags.store;
  }
  if (flags.postgres) {
    if (flags.postgres->empty()) return bad_flag("--postgres", "a connection string (postgresql://USER@HOST:PORT/DB)", "");
    config.store.postgres_url = *flags.postgres;
  }
  if (flags.shards) {
    if (*flags.shards < 1) return bad_flag("--shards", "a positive integer", std::to_string(*flags.shards));
    config.net.shards = *flags.shards;
  }
  if (flags.log_level) {
    if (!is_one_of(*flags.log_level, kLogLevels)) {
      return bad_flag("--log-level", "one of " + join(kLogLevels, ", "), *flags.log_level);
    }
    config.log_level = *flags.log_level;
  }
  if (flags.log_format) {
    if (!is_one_of(*flags.log_format, kLogFormats)) {
      return bad_flag("--log-format", join(kLogFormats, " or "), *flags.log_format);
    }
    config.log_format = *flags.log_format;
  }
  if (flags.recover) {
    if (!is_one_of(*flags.recover, kRecoveryModes)) {
      return bad_flag("--recover", join(kRecoveryModes, " or "), *flags.recover);
    }
    config.store.recovery = recovery_mode(*flags.recover);
  }
  return ok();
}

// A relative path in the configuration file is relative to that file.
void resolve_beside(const std::optional<std::filesystem::path>& config_file, std::filesystem::path& path) {
  if (path.is_relative() && config_file && config_file->has_parent_path()) path = config_file->parent_path() / path;
}

// Adds the users of [auth] users_file to the inline ones, reads tokens_file and acl_file; then
// checks someone can log in.
Status load_users(const std::optional<std::filesystem::path>& config_file, auth::Options& options) {
  if (!options.users_file.empty()) {
    resolve_beside(config_file, options.users_file);
    auto users = auth::read_user_file(options.users_file);
    if (!users) return unexpected(std::move(users).error());
    for (auto& u : *users) {
      for (const auto& inline_user : options.users) {
        if (inline_user.name == u.name) {
          return unexpected(Errc::invalid_argument, fmt::format("user \"{}\" is defined twice, in {} and {}",
                                                                auth::printable_name(u.name), inline_user.source,
                                                                u.source));
        }
      }
    }
    for (auto& u : *users) options.users.push_back(std::move(u));
  }
  if (!options.tokens_file.empty()) {
    resolve_beside(config_file, options.tokens_file);
    auto tokens = auth::read_token_file(options.tokens_file);
    if (!tokens) return unexpected(std::move(tokens).error());
    options.tokens = std::move(*tokens);
  }
  if (!options.acl_file.empty()) {
    resolve_beside(config_file, options.acl_file);
    auto acl = auth::read_acl_file(options.acl_file);
    if (!acl) return unexpected(std::move(acl).error());
    options.acl = std::make_shared<const auth::Acl>(std::move(*acl));
  }
  if (!options.allows_anonymous() && options.users.empty()) {
    return unexpected(Errc::invalid_argument,
                      "auth.anonymous is false but no user is configured ([[auth.user]] or auth.users_file): "
                      "no client could connect");
  }
  return ok();
}

// Relative TLS file names are taken from the config file's directory; each enabled TLS
// listener has a certificate and key (whether the files are good is checked when serve builds
// the context).
Status check_tls(const std::optional<std::filesystem::path>& config_file, Config& config) {
  auto resolve = [&config_file](std::optional<std::string>& file) {
    if (file && std::filesystem::path(*file).is_relative() && config_file && config_file->has_parent_path()) {
      file = (config_file->parent_path() / *file).string();
    }
  };
  auto resolve_all = [&resolve](TlsSection::Keys& keys) {
    resolve(keys.cert_file);
    resolve(keys.key_file);
    resolve(keys.ca_file);
  };
  resolve_all(config.tls.all);
  for (auto& entry : config.tls.listener) resolve_all(entry.second);
  for (auto& link : config.federation.links) {
    for (auto* file : {&link.tls.ca_file, &link.tls.cert_file, &link.tls.key_file}) {
      std::optional<std::string> name;
      if (!file->empty()) name = *file;
      resolve(name);
      if (name) *file = *name;
    }
  }
  const bool federation_tls = config.federation_listener.enabled && config.federation.tls;
  const std::pair<std::string_view, bool> listeners[] = {{"stomp", config.stomp_tls_listener.enabled},
                                                         {"mqtt", config.mqtt_tls_listener.enabled},
                                                         {"http", config.http_tls_listener.enabled},
                                                         {"federation", federation_tls}};
  for (const auto& [name, enabled] : listeners) {
    if (!enabled) continue;
    const auto options = config.tls.for_listener(name);
    if (options.cert_file.empty() || options.key_file.empty()) {
      return unexpected(Errc::invalid_argument,
                        fmt::format("the {} TLS listener needs a certificate: tls.cert_file and tls.key_file (or "
                                    "tls.{}.cert_file and tls.{}.key_file)",
                                    name, name, name));
    }
    if (options.client_certificates != net::ClientCertificates::none && options.ca_file.empty()) {
      return unexpected(Errc::invalid_argument,
                        fmt::format("tls.client_certificates for the {} TLS listener needs tls.ca_file "
                                    "(the CAs client certificates chain to)",
                                    name));
    }
  }
  return ok();
}

}  // namespace

Status parse_listen(std::string_view text, std::string_view key, net::ListenerOptions& out) {
  net::ListenerOptions parsed = out;
  if (auto problem = listen_problem(text, parsed); !problem.empty()) {
    if (problem == kNotListen) return bad_flag(key, "HOST:PORT or off", text);
    return unexpected(Errc::invalid_argument,
                      fmt::format("{}: expected HOST:PORT or off ({}), got {}", key, problem, in_quotes(text)));
  }
  out = std::move(parsed);
  return ok();
}

std::uint64_t default_memory_budget_bytes() {
  // A quarter of physical memory: room for the rest of the process and the page cache the
  // store reads back through. Unknown (sysconf fails): 1 GiB.
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 1ull << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 4;
}

Result<Config> parse_toml(std::string_view text, std::string_view source_name) {
  Config config;
  config.core.memory_budget_bytes = default_memory_budget_bytes();
  if (auto applied = apply_toml(text, source_name, config); !applied) return unexpected(applied.error());
  return config;
}

Result<Config> load(const Flags& flags) {
  Config config;
  config.core.memory_budget_bytes = default_memory_budget_bytes();
  if (flags.config_file) {
    auto text = read_file(*flags.config_file);
    if (!text) return unexpected(std::move(text).error());
    if (auto applied = apply_toml(*text, flags.config_file->string(), config); !applied) {
      return unexpected(applied.error());
    }
  }
  if (auto applied = apply_flags(flags, config); !applied) return unexpected(applied.error());
  if (auto users = load_users(flags.config_file, config.auth); !users) return unexpected(users.error());
  if (auto tls = check_tls(flags.config_file, config); !tls) return unexpected(tls.error());
  if (config.store.kind == "postgres" && config.store.postgres_url.empty()) {
    return unexpected(Errc::invalid_argument,
                      "store \"postgres\" needs a connection string: --postgres URL or [postgres] url");
  }
  return config;
}

}  // namespace carrier::config
