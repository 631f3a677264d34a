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

namespace carrier::stomp::codec {

// Appends one frame to `out` header by header, with no intermediate Headers vector: the
// broker's MESSAGE path. Escaping follows `version` as in encode().
class FrameWriter {
 public:
  FrameWriter(std::string& out, Command command, Version version);
  void header(std::string_view name, std::string_view value);
  // The value written as `prefix` followed by `rest` ("/queue/" + name) without joining them first.
  void header(std::string_view name, std::string_view prefix, std::string_view rest);
  void header(std::string_view name, std::int64_t value);
  // content-length (for a non-empty body), the blank line, the body and the NUL.
  void finish(std::string_view body);

 private:
  void value(std::string_view v);
  std::string& out_;
  Version version_;
  bool escape_;
};

}  // namespace carrier::stomp::codec
