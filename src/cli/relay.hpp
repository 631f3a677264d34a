#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier relay pid|create|search|join|listen|send|poll|demo  (docs/cli.md, docs/relay.md)
// A thin client of seed 000's relay on a broker's HTTP listener, through client::RelayClient:
// each run is one peer, new (its id printed on stderr as "peer: uuid-...") or given with
// --peer (reconnected, so its listens and mailbox carry over between runs).
void add_relay_command(CLI::App& app);

}  // namespace carrier::cli
