#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// `carrier serve`: runs the broker until SIGINT or SIGTERM.
void add_serve_command(CLI::App& app);

}  // namespace carrier::cli
