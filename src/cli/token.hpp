#pragma once

#include <CLI/CLI.hpp>

namespace carrier::cli {

// carrier token create USER --file PATH [--ttl DURATION]: makes a bearer token for HTTP
// (`Authorization: Bearer`), appends its `USER:EXPIRES:SHA256` line to the tokens file
// ([auth] tokens_file; created with mode 0600) and prints the token, once: only its hash is kept.
void add_token_command(CLI::App& app);

}  // namespace carrier::cli
