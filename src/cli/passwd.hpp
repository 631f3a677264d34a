#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier passwd NAME [--hash-only]: reads a password (prompted twice without echo on a
// terminal, else the first line of stdin) and prints `NAME:HASH`, a line for the users file
// (or HASH alone, for password_hash in [[auth.user]]). The password is never an argument: it
// would show in `ps` and the shell history.
void add_passwd_command(CLI::App& app);

}  // namespace carrier::cli
