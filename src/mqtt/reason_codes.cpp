#include "mqtt/reason_codes.hpp"

namespace carrier::mqtt {

using codec::ReasonCode;

ReasonCode reason_for(Errc code, Operation operation) noexcept {
  switch (code) {
    case Errc::invalid_argument:
      switch (operation) {
        case Operation::publish: return ReasonCode::topic_name_invalid;
        case Operation::subscribe:
        case Operation::unsubscribe: return ReasonCode::topic_filter_invalid;
        case Operation::connect: return ReasonCode::client_identifier_not_valid;
        case Operation::connection: return ReasonCode::protocol_error;
      }
      return ReasonCode::unspecified_error;
    case Errc::protocol_error:
      // Acknowledgements cannot say "protocol error"; a connection can.
      return operation == Operation::connect || operation == Operation::connection
                 ? ReasonCode::protocol_error
                 : ReasonCode::implementation_specific_error;
    case Errc::limit_exceeded:
      // A full destination or the broker's memory limit: "quota exceeded" is what MQTT 5 has.
      return ReasonCode::quota_exceeded;
    case Errc::not_found:
      return operation == Operation::unsubscribe ? ReasonCode::no_subscription_existed
                                                 : ReasonCode::implementation_specific_error;
    case Errc::already_exists:
      return ReasonCode::implementation_specific_error;
    case Errc::io_error:
    case Errc::corrupt_data:
      // The store failed: nothing the client did.
      return ReasonCode::unspecified_error;
    case Errc::unavailable:
    case Errc::timed_out:
      switch (operation) {
        case Operation::connect: return ReasonCode::server_unavailable;
        case Operation::connection: return ReasonCode::server_busy;
        case Operation::publish:
        case Operation::subscribe:
        case Operation::unsubscribe: return ReasonCode::unspecified_error;  // acks have no "busy"
      }
      return ReasonCode::unspecified_error;
    case Errc::shutting_down:
      switch (operation) {
        case Operation::connect: return ReasonCode::server_unavailable;
        case Operation::connection: return ReasonCode::server_shutting_down;
        case Operation::publish:
        case Operation::subscribe:
        case Operation::unsubscribe: return ReasonCode::unspecified_error;
      }
      return ReasonCode::unspecified_error;
    case Errc::permission_denied:
      return operation == Operation::connect ? ReasonCode::bad_user_name_or_password : ReasonCode::not_authorized;
  }
  return ReasonCode::unspecified_error;
}

codec::ConnectReturnCode to_return_code(ReasonCode reason) noexcept {
  using codec::ConnectReturnCode;
  switch (reason) {
    case ReasonCode::success: return ConnectReturnCode::accepted;
    case ReasonCode::unsupported_protocol_version: return ConnectReturnCode::unacceptable_protocol_version;
    case ReasonCode::client_identifier_not_valid: return ConnectReturnCode::identifier_rejected;
    case ReasonCode::bad_user_name_or_password:
    case ReasonCode::bad_authentication_method: return ConnectReturnCode::bad_user_name_or_password;
    case ReasonCode::not_authorized:
    case ReasonCode::banned: return ConnectReturnCode::not_authorized;
    default: return ConnectReturnCode::server_unavailable;
  }
}

}  // namespace carrier::mqtt
