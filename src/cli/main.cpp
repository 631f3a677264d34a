#include <CLI/CLI.hpp>

#include "cli/admin.hpp"
#include "cli/bench.hpp"
#include "cli/commands.hpp"
#include "cli/federation.hpp"
#include "cli/passwd.hpp"
#include "cli/relay.hpp"
#include "cli/serve.hpp"
#include "cli/token.hpp"
#include "cli/top.hpp"

int main(int argc, char** argv) {
  CLI::App app{"carrier: a message broker (STOMP, MQTT, HTTP and WebSocket)"};
  app.require_subcommand(1);
  carrier::cli::add_serve_command(app);
  carrier::cli::add_send_command(app);
  carrier::cli::add_recv_command(app);
  carrier::cli::add_version_command(app);
  carrier::cli::add_bench_command(app);
  carrier::cli::add_passwd_command(app);
  carrier::cli::add_token_command(app);
  carrier::cli::add_admin_command(app);
  carrier::cli::add_top_command(app);
  carrier::cli::add_federation_command(app);
  carrier::cli::add_relay_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return carrier::cli::usage_exit_code(app, e);
  }
  return 0;
}
