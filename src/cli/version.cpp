#include <cstdio>
#include <cstdlib>

#include "cli/commands.hpp"

#ifndef CARRIER_VERSION
#error "CARRIER_VERSION must be defined by the build (src/client/CMakeLists.txt)"
#endif

namespace carrier::cli {

void add_version_command(CLI::App& app) {
  auto* command = app.add_subcommand("version", "Print carrier's version");
  command->callback([] {
    std::printf("carrier %s\n", CARRIER_VERSION);
    std::exit(kExitOk);
  });
}

}  // namespace carrier::cli
