#pragma once

#include <cstdint>
#include <optional>

#include "model/message.hpp"
#include "stomp/codec/frame.hpp"
#include "stomp/errors.hpp"

namespace carrier::stomp {

struct SendLimits {
  std::int64_t arrival_ms = 0;            // deliver-at and delay count from here
  std::uint64_t max_schedule_delay_ms = 0;  // [core] max_schedule_delay_ms
};

// A SEND's headers onto `message`: persistent, priority (0-9), expires and deliver-at (epoch ms,
// not negative), delay / AMQ_SCHEDULED_DELAY (ms, at most the limit), timestamp (a number
// replaces the arrival time, anything else is ignored), correlation-id, reply-to (as written: the
// session resolves temporary queues), type, content-type, and every other header not reserved
// as a property. A repeated header: the first one wins. Destination, id, body and timestamp's
// default are the caller's. invalid_header, naming the header and the value, if one is wrong.
// Fills a Message in place rather than returning a struct: SEND is the hot path.
std::optional<Refused> read_send_headers(const codec::Headers& headers, const SendLimits& limits,
                                         model::Message& message);

// Headers that mean something to the broker itself and are not passed through as properties.
bool is_reserved_header(std::string_view name);

}  // namespace carrier::stomp
