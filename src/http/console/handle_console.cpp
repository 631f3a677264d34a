// GET /console/...: the web console's embedded files (docs/console.md). The page itself holds no
// data: it calls the admin API, which checks the admin right on every request, so its files are
// served without credentials (a browser must load the login form before it can log in).
#include <fmt/format.h>

#include "http/console/console_assets.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// Only the console's own files, scripts and styles; the admin API on the same origin; no
// frames, no inline script or style, no plugins.
constexpr std::string_view kSecurityHeaders =
    "Content-Security-Policy: default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'\r\n"
    "X-Content-Type-Options: nosniff\r\n"
    "X-Frame-Options: DENY\r\n"
    "Referrer-Policy: no-referrer\r\n"
    "Cross-Origin-Opener-Policy: same-origin\r\n";

}  // namespace

bool Session::is_console_path(std::string_view path) { return path == "/console" || path.starts_with("/console/"); }

void Session::handle_console(std::string_view path) {
  const auto method = current_->method();
  if (method != bhttp::verb::get && method != bhttp::verb::head) {
    problem(405, "use GET", "Allow: GET, HEAD\r\n");
    return;
  }
  if (options_.admin == nullptr) {
    problem(404, "the web console needs the admin API, which is not enabled on this listener");
    return;
  }
  if (path == "/console") {
    // Relative links in the page resolve against /console/.
    respond(308, "text/plain; charset=utf-8", "/console/\n", "Location: /console/\r\n");
    return;
  }
  std::string_view file = path.substr(std::string_view("/console/").size());
  if (file.empty()) file = "index.html";
  const auto asset = console::find_asset(file);
  if (!asset) {
    problem(404, fmt::format("the console has no file '{}'", file.substr(0, 200)));
    return;
  }
  // Revalidated on every load (no-cache) and answered 304 while unchanged: a new broker
  // version's console is never mixed with a cached old one.
  const std::string headers = fmt::format("ETag: {}\r\nCache-Control: no-cache\r\n{}", asset->etag, kSecurityHeaders);
  const auto match = view((*current_)[bhttp::field::if_none_match]);
  if (!match.empty() && (match == asset->etag || match == "*" || match.find(asset->etag) != std::string_view::npos)) {
    respond(304, {}, {}, headers);
    return;
  }
  respond(200, asset->content_type, asset->body, headers);
}

}  // namespace carrier::http
