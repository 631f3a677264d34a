#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier bench [--preset S1|S2|S3|S4|M1|M2|M3|L1|L2] [--protocol stomp|mqtt] [--server HOST:PORT]
//               [--producers N] [--consumers N] [--count M | --duration S] [--size B] [--dest NAME]
//               [--kind queue|topic] [--persistent] [--receipts WINDOW] [--ack MODE] [--prefetch N]
//               [--qos 0|1|2] [--rate R] [--json] ...
// The end-to-end load tool (docs/bench.md). Exit code 0: no loss, no duplicates, nothing
// failed; 1 otherwise; 2 bad usage (also a non-loopback --server without --allow-remote).
void add_bench_command(CLI::App& app);

}  // namespace carrier::cli
