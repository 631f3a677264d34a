#include "stomp/errors.hpp"

#include <fmt/format.h>

namespace carrier::stomp {

Refusal refusal_for(Errc code, Operation operation) noexcept {
  switch (operation) {
    case Operation::decode:
      switch (code) {
        case Errc::limit_exceeded: return Refusal::frame_too_large;
        case Errc::invalid_argument:
        case Errc::protocol_error:
        case Errc::not_found:
        case Errc::already_exists:
        case Errc::io_error:
        case Errc::corrupt_data:
        case Errc::unavailable:
        case Errc::shutting_down:
        case Errc::timed_out:
        case Errc::permission_denied: return Refusal::malformed_frame;
      }
      break;
    case Operation::send_destination:
      // The problem is the message: "unknown exchange 'x'...", "queue 'q' does not exist...".
      return Refusal::destination_refused;
    case Operation::subscribe_destination:
      switch (code) {
        case Errc::invalid_argument: return Refusal::invalid_destination;
        case Errc::protocol_error:
        case Errc::limit_exceeded:
        case Errc::not_found:  // an unknown exchange, a queue that auto_create may not make
        case Errc::already_exists:
        case Errc::io_error:
        case Errc::corrupt_data:
        case Errc::unavailable:
        case Errc::shutting_down:
        case Errc::timed_out:
        case Errc::permission_denied: return Refusal::destination_refused;  // another's temporary queue
      }
      break;
    case Operation::send:
      switch (code) {
        case Errc::limit_exceeded: return Refusal::destination_full;  // overflow = "reject"
        case Errc::not_found: return Refusal::destination_does_not_exist;  // a temporary queue gone
        case Errc::invalid_argument:
        case Errc::protocol_error:
        case Errc::already_exists:
        case Errc::io_error:
        case Errc::corrupt_data:
        case Errc::unavailable:
        case Errc::shutting_down:
        case Errc::timed_out:
        case Errc::permission_denied: return Refusal::message_not_stored;
      }
      break;
    case Operation::subscribe:
      return Refusal::subscription_failed;
    case Operation::remove_subscription:
      // Mostly not_found; a store failure says the same, the subscription stays as it was.
      return Refusal::unknown_subscription;
    case Operation::acknowledge:
      return Refusal::acknowledgement_not_stored;
    case Operation::commit:
      return Refusal::transaction_not_committed;
  }
  return Refusal::malformed_frame;
}

Refusal refusal_for(auth::Verdict verdict) noexcept {
  switch (verdict) {
    case auth::Verdict::busy: return Refusal::server_busy;
    case auth::Verdict::throttled: return Refusal::too_many_failed_logins;
    case auth::Verdict::accepted:  // not a refusal; answered as a rejection if ever asked
    case auth::Verdict::rejected: return Refusal::authentication_failed;  // one answer for every cause
  }
  return Refusal::authentication_failed;
}

std::string error_message(Refusal why, codec::Command command, std::string_view detail) {
  switch (why) {
    case Refusal::server_busy: return "server busy";
    case Refusal::connect_timeout: return "connect timeout";
    case Refusal::not_connected: return "not connected";
    case Refusal::already_connected: return "already connected";
    case Refusal::unsupported_version: return "unsupported protocol version";
    case Refusal::invalid_heart_beat: return "invalid heart-beat header";
    case Refusal::authentication_failed: return "authentication failed";
    case Refusal::too_many_failed_logins: return "too many failed logins";
    case Refusal::too_many_connections: return "too many connections";
    case Refusal::connection_rate_exceeded: return "connection rate exceeded";
    case Refusal::frame_too_large: return "frame too large";
    case Refusal::malformed_frame: return "malformed frame";
    case Refusal::unexpected_frame: return "unexpected frame";
    case Refusal::unknown_command: return "unknown command";
    case Refusal::missing_header: return fmt::format("{} frame has no {} header", codec::to_string(command), detail);
    case Refusal::invalid_header:
    case Refusal::destination_refused: return std::string(detail);
    case Refusal::invalid_destination: return "invalid destination";
    case Refusal::duplicate_subscription: return "duplicate subscription id";
    case Refusal::too_many_subscriptions: return "too many subscriptions";
    case Refusal::invalid_ack_mode: return "invalid ack mode";
    case Refusal::invalid_prefetch: return "invalid prefetch";
    case Refusal::invalid_selector: return "invalid selector";
    case Refusal::shared_subscription_without_name: return "shared subscription without a name";
    case Refusal::durable_subscription_without_client_id: return "durable subscription without client-id";
    case Refusal::unknown_subscription: return "unknown subscription";
    case Refusal::access_denied: return "access denied";
    case Refusal::unknown_message: return fmt::format("{} for an unknown message", codec::to_string(command));
    case Refusal::unknown_transaction: return "unknown transaction";
    case Refusal::transaction_already_begun: return "transaction already begun";
    case Refusal::too_many_transactions: return "too many open transactions";
    case Refusal::transaction_too_large: return "transaction too large";
    case Refusal::destination_full: return "destination full";
    case Refusal::destination_does_not_exist: return "destination does not exist";
    case Refusal::message_not_stored: return "message not stored";
    case Refusal::subscription_failed: return "subscription failed";
    case Refusal::acknowledgement_not_stored: return "acknowledgement not stored";
    case Refusal::transaction_not_committed: return "transaction not committed";
    case Refusal::heart_beat_timeout: return "heart-beat timeout";
    case Refusal::slow_consumer: return "slow consumer";
    case Refusal::shutting_down: return "broker shutting down";
    case Refusal::closed_by_administrator: return "closed by an administrator";
  }
  return "error";
}

ErrorFrame error_frame(Refusal why, codec::Command command, std::string_view detail, const std::string* receipt) {
  ErrorFrame frame;
  auto message = error_message(why, command, detail);
  // A missing header's name is no detail: the message says it all.
  const bool detail_is_body = !detail.empty() && why != Refusal::missing_header;
  frame.body = detail_is_body ? std::string(detail) : message;
  frame.body.push_back('\n');
  frame.headers.emplace_back("message", std::move(message));
  // The versions we speak, as the specification asks of this ERROR.
  if (why == Refusal::unsupported_version) frame.headers.emplace_back("version", "1.0,1.1,1.2");
  frame.headers.emplace_back("content-type", "text/plain");
  if (receipt != nullptr) frame.headers.emplace_back("receipt-id", *receipt);
  // A client that stopped reading must not keep these connections open.
  frame.bounded_close = why == Refusal::slow_consumer || why == Refusal::closed_by_administrator;
  frame.keeps_connection = why == Refusal::access_denied;
  return frame;
}

}  // namespace carrier::stomp
