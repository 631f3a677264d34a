#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier federation stop|restart --connect HOST:PORT --target NODE_ID --selector KEY
//                                 [--username U]   (password from $CARRIER_FEDERATION_PASSWORD)
// Dials a node's federation listener as a short-lived link and sends it stopForwarding or
// restartForwarding: the node pauses (resumes) forwarding of KEY ("queue:orders", or "*") to
// the node NODE_ID (32 hex digits, from that node's `federation node ...` log line or its
// DATA_DIR/federation-node-id). Prints the node's answer; exit 0 on "ok", 1 otherwise.
void add_federation_command(CLI::App& app);

// carrier federation add --name N --connect HOST:PORT [--username U] [--cost C]
//                    remove --name N | list [--json]          [--server HOST:PORT] [--user U]
// The node's links changed and listed at runtime through its admin API
// (/admin/v1/federation/links; federation_links.cpp).
void add_federation_link_commands(CLI::App& federation);

}  // namespace carrier::cli
