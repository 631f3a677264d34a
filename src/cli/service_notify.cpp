#include "cli/service_notify.hpp"

#include <systemd/sd-daemon.h>

#include <string>

namespace carrier::cli {

void notify_status(std::string_view status) {
  sd_notify(0, ("STATUS=" + std::string(status)).c_str());
}

void notify_ready(std::string_view status) {
  sd_notify(0, ("READY=1\nSTATUS=" + std::string(status)).c_str());
}

void notify_stopping() { sd_notify(0, "STOPPING=1\nSTATUS=shutting down"); }

}  // namespace carrier::cli
