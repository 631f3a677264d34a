#include "base/error.hpp"

namespace carrier {

const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid argument";
    case Errc::protocol_error: return "protocol error";
    case Errc::limit_exceeded: return "limit exceeded";
    case Errc::not_found: return "not found";
    case Errc::already_exists: return "already exists";
    case Errc::io_error: return "i/o error";
    case Errc::corrupt_data: return "corrupt data";
    case Errc::unavailable: return "unavailable";
    case Errc::shutting_down: return "shutting down";
    case Errc::timed_out: return "timed out";
    case Errc::permission_denied: return "permission denied";
  }
  return "unknown error";
}

std::string Error::to_string() const {
  if (detail.empty()) return carrier::to_string(code);
  return std::string(carrier::to_string(code)) + ": " + detail;
}

}  // namespace carrier
