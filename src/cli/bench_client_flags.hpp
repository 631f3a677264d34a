#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace carrier::cli {

// The flags every `carrier bench` subcommand that connects as a client shares: how it logs in
// and how it reports. `mqtt`: the subcommand speaks MQTT too, so the help says what the
// credentials are there.
inline void add_bench_client_flags(CLI::App& cmd, std::string& login, std::string& passcode, std::string& vhost,
                                   bool& json, bool& quiet, bool mqtt) {
  cmd.add_option("--login", login, mqtt ? "STOMP login / MQTT user name" : "STOMP login");
  cmd.add_option("--passcode", passcode, mqtt ? "STOMP passcode / MQTT password" : "STOMP passcode");
  cmd.add_option("--vhost", vhost, "STOMP CONNECT host header (default: the --server host)");
  cmd.add_flag("--json", json, "Print the result as one JSON object on stdout");
  cmd.add_flag("-q,--quiet", quiet, "No progress lines on stderr");
}

}  // namespace carrier::cli
