#include "http/codec/problem.hpp"

#include <nlohmann/json.hpp>

namespace carrier::http::codec {

int status_for(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return 400;
    case Errc::protocol_error: return 400;
    case Errc::limit_exceeded: return 429;  // a full destination, the memory limit: retry later
    case Errc::not_found: return 404;
    case Errc::already_exists: return 409;
    case Errc::io_error: return 503;       // the store failed: nothing was confirmed
    case Errc::corrupt_data: return 503;
    case Errc::unavailable: return 503;
    case Errc::shutting_down: return 503;
    case Errc::timed_out: return 504;
    case Errc::permission_denied: return 403;
  }
  return 500;
}

std::string_view reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 304: return "Not Modified";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
  }
  return "Unknown";
}

std::string problem_json(int status, std::string_view detail) {
  nlohmann::json doc{{"type", "about:blank"},
                     {"title", reason_phrase(status)},
                     {"status", status},
                     {"detail", std::string(detail)}};
  // A client's bytes quoted in `detail` need not be UTF-8: replaced, never a throw.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace carrier::http::codec
