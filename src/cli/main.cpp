#include <CLI/CLI.hpp>

#include "cli/serve.hpp"
#ifdef CARRIER_HAVE_CLIENT_COMMANDS
#include "cli/commands.hpp"
#endif

int main(int argc, char** argv) {
  CLI::App app{"carrier: a message broker (STOMP; MQTT and HTTP to come)"};
  app.require_subcommand(1);
  carrier::cli::add_serve_command(app);
#ifdef CARRIER_HAVE_CLIENT_COMMANDS
  carrier::cli::add_send_command(app);
  carrier::cli::add_recv_command(app);
  carrier::cli::add_version_command(app);
#endif
  CLI11_PARSE(app, argc, argv);
  return 0;
}
