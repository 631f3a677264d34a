#pragma once

#include <string>
#include <string_view>

#include "auth/authenticator.hpp"
#include "base/error.hpp"
#include "stomp/codec/frame.hpp"

namespace carrier::stomp {

// Every reason a STOMP session sends ERROR (and closes the connection, as the specification
// requires; `access_denied` alone leaves it open: issue 16, the refused frame is dropped). Each is one `message` header that clients see and may match on; the body carries
// the detail naming the thing. docs/stomp.md lists them.
enum class Refusal {
  // Before CONNECTED.
  server_busy,             // too many connections logging in, or logins waiting for a check
  connect_timeout,         // no whole CONNECT in time
  not_connected,           // a frame before CONNECT
  already_connected,       // a second CONNECT
  unsupported_version,     // accept-version names no version we speak
  invalid_heart_beat,      // heart-beat is not two 32-bit integers
  authentication_failed,   // unknown user, wrong password, or none where one is required
  too_many_failed_logins,  // the address failed too many password checks lately
  too_many_connections,    // [limits] max_connections or max_connections_per_source
  connection_rate_exceeded,  // [limits] connection_rate_per_source
  // Any frame.
  frame_too_large,   // over max_frame_bytes (max_connect_bytes before CONNECTED)
  malformed_frame,   // the codec refused the bytes
  unexpected_frame,  // a server frame (MESSAGE, ERROR...) from the client
  unknown_command,   // a command the negotiated version does not have (NACK in 1.0)
  missing_header,    // message: "<COMMAND> frame has no <header> header"
  // SEND.
  invalid_header,      // message: the problem itself (priority, expires, delay, deliver-at)
  destination_refused, // message: the problem itself (unknown exchange, not ours, not found)
  // SUBSCRIBE and UNSUBSCRIBE.
  invalid_destination,  // a destination that does not parse (SUBSCRIBE)
  duplicate_subscription,
  too_many_subscriptions,
  invalid_ack_mode,
  invalid_prefetch,
  invalid_selector,
  shared_subscription_without_name,
  durable_subscription_without_client_id,
  unknown_subscription,
  // The ACL (SEND, SUBSCRIBE) or a client-id's owner (CONNECT, durable subscriptions).
  access_denied,  // the body names the user, the right and the destination
  // ACK and NACK.
  unknown_message,  // message: "<COMMAND> for an unknown message"
  // Transactions.
  unknown_transaction,
  transaction_already_begun,
  too_many_transactions,
  transaction_too_large,
  // The broker (core, store) refused what the frame asked.
  destination_full,
  destination_does_not_exist,
  message_not_stored,
  subscription_failed,
  acknowledgement_not_stored,
  transaction_not_committed,
  // The connection as a whole.
  heart_beat_timeout,
  slow_consumer,
  shutting_down,
  closed_by_administrator,  // the admin API closed it; the body is the administrator's reason
};

// A frame the session refuses: why, and what to say about it (the ERROR body).
struct Refused {
  Refusal why;
  std::string detail;
};

// What the session asked for when an Errc came back: the same Errc means a different ERROR for a
// frame's bytes, a SEND's destination or a store confirmation.
enum class Operation {
  decode,                 // the codec reading a frame
  send_destination,       // resolving a SEND's destination
  subscribe_destination,  // resolving a SUBSCRIBE's destination (and the broker refusing it)
  send,                   // the broker storing and routing SENDs
  subscribe,              // the broker completing a SUBSCRIBE
  remove_subscription,    // the broker removing a durable subscription (UNSUBSCRIBE)
  acknowledge,            // the broker storing ACKs and NACKs
  commit,                 // the broker committing a transaction
};

// The one place an Errc becomes a STOMP ERROR: an exhaustive switch, so a new Errc does not
// compile until STOMP has decided what it means.
Refusal refusal_for(Errc code, Operation operation) noexcept;
// The authenticator's verdict on CONNECT; `accepted` is no refusal and is not asked.
Refusal refusal_for(auth::Verdict verdict) noexcept;

// The `message` header for `why`. `command` is the refused frame's (it names some messages);
// `detail` is the message itself for the refusals that say so above, and a missing header's name.
std::string error_message(Refusal why, codec::Command command, std::string_view detail);

// The whole ERROR frame for `why`: `message`, `content-type`, `receipt-id` (when the refused frame
// asked for a receipt) and the body, `detail` or else the message.
struct ErrorFrame {
  codec::Headers headers;
  std::string body;
  // The connection closes once the ERROR is written; a client that is not reading (a slow
  // consumer) only gets a bounded moment for it.
  bool bounded_close = false;
  // The connection stays open: the client is told, and its other work carries on.
  bool keeps_connection = false;
};
ErrorFrame error_frame(Refusal why, codec::Command command, std::string_view detail, const std::string* receipt);

}  // namespace carrier::stomp
