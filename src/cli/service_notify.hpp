#pragma once

#include <string_view>

namespace carrier::cli {

// Tells the service manager where `carrier serve` is (systemd's sd_notify protocol), so a unit
// with Type=notify is "started" only once the listeners accept connections and a restart waits
// for the store to close. Without $NOTIFY_SOCKET (not run by systemd) each call does nothing.
void notify_status(std::string_view status);
void notify_ready(std::string_view status);
void notify_stopping();

}  // namespace carrier::cli
