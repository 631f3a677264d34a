#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier admin [--server HOST:PORT] [--user NAME] VIEW|ACTION ...: the admin API's command-line
// client (docs/admin.md): queues, subscriptions, connections [--sort KEY] [--asc] [--filter F]
// [--limit N] [--json], overview, browse QUEUE, purge QUEUE [--selector S], move QUEUE --to Q
// [--selector S] [--copy], close ID. The password of --user comes from $CARRIER_PASSWORD, never
// an argument.
void add_admin_command(CLI::App& app);

}  // namespace carrier::cli
