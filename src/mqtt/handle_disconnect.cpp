// DISCONNECT and AUTH from the client.

#include <fmt/format.h>

#include "mqtt/session.hpp"

namespace carrier::mqtt {

void Session::handle_disconnect(const codec::Disconnect& d) {
  if (version_ == codec::Version::v5) {
    if (auto expiry = d.properties.session_expiry_interval) {
      // A session that was to end with its connection cannot be made persistent now (3.14.2.2.2).
      if (session_expiry_ == 0 && *expiry != 0) {
        disconnect(codec::ReasonCode::protocol_error, "session expiry set at DISCONNECT after CONNECT had 0");
        return;
      }
      session_expiry_ = std::min(*expiry, options_.session_expiry_max);
    }
  }
  // 0x04 "disconnect with will message" keeps the will; any other goodbye drops it.
  clean_disconnect_ = d.reason != codec::ReasonCode::disconnect_with_will_message;
  close_after_flush();
}

void Session::handle_auth(const codec::Auth&) {
  // No CONNECT here named an authentication method (those are refused with 0x8C), so an AUTH
  // packet is always out of place (MQTT 5 4.12).
  disconnect(codec::ReasonCode::protocol_error, "AUTH without an authentication method");
}

}  // namespace carrier::mqtt
