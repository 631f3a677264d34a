#pragma once

#include <cstddef>
#include <cstdint>

#include "net/options.hpp"

namespace carrier::mqtt {

struct Options {
  // The largest packet accepted from a client (fixed header included); told to MQTT 5 clients
  // in CONNACK. A larger one closes the connection (DISCONNECT 0x95 on MQTT 5).
  std::size_t max_packet_size = 16u << 20;
  // Longest keep-alive the broker lets an MQTT 5 client use, in seconds: a larger (or 0, "none")
  // request is answered with this as the server keep alive. 0: whatever the client asks. MQTT
  // 3.x clients cannot be told, so theirs is used as they asked.
  std::uint16_t max_keep_alive = 0;
  // QoS 1 and 2 PUBLISHes a client may have unacknowledged towards the broker (MQTT 5 receive
  // maximum, in CONNACK); one more is a protocol violation (DISCONNECT 0x93).
  std::uint16_t receive_maximum = 100;
  // QoS 1 and 2 PUBLISHes the broker sends a client before waiting for acknowledgements: the
  // subscriptions' prefetch. An MQTT 5 client's smaller receive maximum wins.
  std::uint16_t max_inflight = 100;
  // Topic aliases a client may set up towards the broker (MQTT 5, in CONNACK); 0: none.
  std::uint16_t topic_alias_maximum = 16;
  // Upper bound on a session's expiry interval in seconds (what MQTT 5 clients ask for and what
  // clean-session=false means for 3.x clients, "never"). 0xFFFFFFFF: no bound.
  std::uint32_t session_expiry_max = 0xFFFFFFFF;
  // A connection that has not sent CONNECT within this many milliseconds is closed.
  std::uint32_t connect_timeout_ms = 10000;
  // The largest packet read before CONNECT (so the CONNECT itself, will included): a larger one
  // closes the connection at its fixed header (CONNACK 0x95 on MQTT 5), nothing buffered.
  std::size_t max_connect_packet_size = 64u << 10;
  // Encoded output one connection may hold for a client that reads slowly; past it deliveries
  // wait in the core (or `slow_consumer` applies to QoS 0 ones). One packet always fits.
  std::size_t max_pending_output_bytes = 4u << 20;
  net::SlowConsumerPolicy slow_consumer = net::SlowConsumerPolicy::drop;
  // Levels ('/'-separated) a topic name or filter may have (EMQX's default too): each level of
  // a filter is a node in every shard's subscription index. A deeper filter is refused in its
  // SUBACK, a deeper PUBLISH topic with 0x90.
  std::uint32_t max_topic_levels = 128;
  // Subscriptions (filters) one session may hold, persistent or not: the ones past it are
  // refused in the SUBACK (0x97 quota exceeded on MQTT 5, 0x80 on 3.x).
  std::uint32_t max_subscriptions_per_session = 10000;
  // PUBLISHes a connection may make a second, `message_burst` at once ([limits]; 0: no limit).
  // Past it the connection is not read until it may publish again (back-pressure, no refusal).
  std::uint32_t max_messages_per_second = 0;
  std::uint32_t message_burst = 0;  // 0: as many as max_messages_per_second
};

}  // namespace carrier::mqtt
