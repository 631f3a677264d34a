#pragma once

#include <CLI/CLI.hpp>

#include "net/options.hpp"

namespace carrier::cli {

// The client subcommands' TLS flags (send, recv, bench): --tls, and --ca / --cert / --key /
// --server-name, any of which also turns TLS on.
inline void add_tls_flags(CLI::App* command, net::TlsClientOptions& tls) {
  auto turn_on = [&tls](const std::string&) { tls.enabled = true; };
  command->add_flag("--tls", tls.enabled, "Connect over TLS (the broker's --stomp-tls / --mqtt-tls port)");
  command->add_option("--ca", tls.ca_file, "TLS: PEM file of the CAs the broker's certificate chains to "
                                           "(default: the system's)")
      ->each(turn_on);
  command->add_option("--cert", tls.cert_file, "TLS: client certificate (PEM) for mutual TLS")->each(turn_on);
  command->add_option("--key", tls.key_file, "TLS: the client certificate's private key (PEM)")->each(turn_on);
  command->add_option("--server-name", tls.server_name,
                      "TLS: the name the broker's certificate must carry (default: the --server host)")
      ->each(turn_on);
}

}  // namespace carrier::cli
