#pragma once

#include <string>
#include <string_view>

#include "stomp/codec/frame.hpp"

namespace carrier::stomp::codec {

// Appends one frame to `out`: command, escaped headers (per `version`; never for CONNECTED),
// a content-length header when the body is not empty and none was given, the body and NUL.
void encode(Command command, const Headers& headers, std::string_view body, Version version,
            std::string& out);

inline void encode(const Frame& frame, Version version, std::string& out) {
  encode(frame.command, frame.headers, frame.body, version, out);
}

}  // namespace carrier::stomp::codec
