#pragma once

#include <string>
#include <utility>

namespace carrier {

// The closed list of expected failures. Each protocol maps these to its wire codes in one
// exhaustive switch (stomp/errors.cpp), so adding one is a compile error until every
// protocol has decided what it means.
enum class Errc {
  invalid_argument,   // a value the caller gave is not acceptable
  protocol_error,     // a peer broke the protocol
  limit_exceeded,     // a configured limit (frame size, headers, memory) was reached
  not_found,          // the named thing does not exist
  already_exists,     // the named thing exists and may not be created again
  io_error,           // the operating system refused a read, write or sync
  corrupt_data,       // stored data failed its checksum or does not parse
  unavailable,        // a dependency (store, peer) cannot serve now; try again later
  shutting_down,      // the broker is stopping
  timed_out,          // no answer within the allowed time
  permission_denied,  // the caller may not do this
};

const char* to_string(Errc code) noexcept;

// An Errc with a detail that names the thing: the key, the file and offset, the destination.
struct Error {
  Errc code;
  std::string detail;

  Error(Errc c, std::string d = {}) : code(c), detail(std::move(d)) {}
  std::string to_string() const;
};

}  // namespace carrier
