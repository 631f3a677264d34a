#pragma once

// The client-side subcommands of `carrier` (send, recv, version), for src/cli/main.cpp:
//
//   CLI::App app{"carrier"};
//   app.require_subcommand(1);
//   carrier::cli::add_send_command(app);
//   carrier::cli::add_recv_command(app);
//   carrier::cli::add_version_command(app);
//   carrier::cli::add_serve_command(app);
//   try {
//     app.parse(argc, argv);
//   } catch (const CLI::ParseError& e) {
//     return carrier::cli::usage_exit_code(app, e);
//   }
//
// Each add_* registers one subcommand whose callback runs the command when CLI11 has parsed
// the whole command line, then ends the process with std::exit(code) (the command's objects are
// destroyed before that; stdout is flushed by exit): 0 ok, 1 failure (one line on stderr),
// 2 bad usage. So code after app.parse() runs only when none of these subcommands was given.
// Plain CLI11_PARSE works too, but exits with CLI11's own codes (100+) on bad usage.

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier send DEST [--body TEXT | --file F] [--header k=v]... [--count N] [--persistent]
//                   [--receipt] [--server HOST:PORT] [--login U --passcode P] [--verbose]
void add_send_command(CLI::App& app);
// carrier recv DEST [--count N] [--timeout S] [--ack MODE] [--headers] [--server HOST:PORT] ...
void add_recv_command(CLI::App& app);
// carrier version: prints "carrier <version>".
void add_version_command(CLI::App& app);

// The exit code for a CLI11 parse failure: 0 after --help (which it prints), 2 for bad usage
// (with CLI11's message on stderr).
inline int usage_exit_code(const CLI::App& app, const CLI::ParseError& error) {
  int code = app.exit(error);
  return code == 0 ? 0 : 2;
}

// Exit codes shared by the subcommands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace carrier::cli
