#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier top [--server HOST:PORT] [--user NAME] [--interval S] [--iterations N]: a live view
// of a running broker over its admin API (docs/cli.md), refreshed in place with plain ANSI
// escapes; q (or Ctrl-C) quits and gives the terminal back as it was.
void add_top_command(CLI::App& app);

}  // namespace carrier::cli
