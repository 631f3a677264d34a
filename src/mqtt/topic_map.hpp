#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace carrier::mqtt {

// MQTT topic names and filters as core topic names and filters, the same topic for every
// protocol: MQTT `a/b/c` is core `a.b.c` (STOMP `/topic/a.b.c`), `+` is `*`, `#` is `>`.
//
// Within a level, characters core gives a meaning are escaped so that the mapping is one-to-one:
// `.` becomes `/` (and back: ActiveMQ's swap, so MQTT `a/b.c` is STOMP `/topic/a.b/c`); `%`, `*`
// and `>` become `%25`, `%2A`, `%3E`; an empty level (MQTT `/a`, `a//b`) becomes `%`, since core
// refuses empty levels in filters.

std::string to_core_name(std::string_view mqtt_topic);

// The MQTT topic for a core name; nullopt when the result would not be a valid MQTT topic name
// (a STOMP destination holding U+0000, invalid UTF-8, `+` or `#`, or longer than 64 KiB).
std::optional<std::string> to_mqtt_name(std::string_view core_name);

// An MQTT filter (not a `$share/` one) as core filters. Core's `>` matches one or more levels,
// MQTT's `#` zero or more: `a/#` also matches `a`, so it needs a second core filter, `parent`
// (`a/#` -> `a.>` and `a`). `#` alone needs none.
struct CoreFilters {
  std::string main;
  std::optional<std::string> parent;
};
CoreFilters to_core_filters(std::string_view mqtt_filter);

// Whether a topic name or filter has more than `max_levels` '/'-separated levels. O(1) for one
// shorter than `max_levels` bytes (it cannot have more levels than bytes + 1), as most are.
bool exceeds_levels(std::string_view topic, std::size_t max_levels);

// Whether the filter's first level is a wildcard: such filters do not match topics starting
// with `$` (MQTT 4.7.2), which core's `*` and `>` would.
bool starts_with_wildcard(std::string_view mqtt_filter);

// MQTT 5 response topic <-> core reply-to, which STOMP spells as a destination: `a/b` <->
// `/topic/a.b`. A reply-to that is not a `/topic/` destination is passed through as it is (when
// it is a valid MQTT string).
std::string to_reply_to(std::string_view response_topic);
std::optional<std::string> to_response_topic(std::string_view reply_to);
// A topic name that is such a passed-through reply-to naming a temporary queue
// (`/temp-queue/carrier-...`, a STOMP or HTTP requester's): that queue's name, for a reply
// published to it to reach the requester. nullopt for any other topic.
std::optional<std::string> reply_queue_of(std::string_view topic);

}  // namespace carrier::mqtt
