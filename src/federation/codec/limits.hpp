#pragma once

#include <cstddef>

namespace carrier::federation::codec {

// What a decoder accepts from a peer. Every count and length on the wire is checked against
// these and against the bytes actually present before anything is allocated, so a hostile
// stack size of 2^31 or a payload length of 2^32-1 costs nothing. The defaults are documented
// in docs/federation.md ("Limits"); the link's options will set them once links exist.
struct Limits {
  // A whole frame, its 12-byte header included. Larger frames are refused as soon as their
  // header arrives (the stream cannot be resynchronised cheaply, so the link closes).
  std::size_t max_frame_bytes = 32u << 20;
  // One BasicMessage payload (the encoded Carrier message: headers, properties, body).
  std::size_t max_payload_bytes = 32u << 20;
  // Entries in a BasicMessage's routing stack: one per hop, and TTL (default 5) bounds hops.
  std::size_t max_stack_entries = 1024;
  // One PString (selector, property key or value, forwarder key/value) or result string,
  // terminator excluded.
  std::size_t max_string_bytes = 64u << 10;
  // Strings in a NodeProperty (slotSize): keys, counts and values together.
  std::size_t max_property_slots = 65536;
};

}  // namespace carrier::federation::codec
