#include <algorithm>

#include <fmt/format.h>

#include "http/codec/query.hpp"
#include "http/openapi.hpp"
#include "http/session.hpp"
#include "relay/codec/relay_target.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// "/v1/queues/orders.eu/messages" -> {"v1", "queues", "orders.eu", "messages"} (still encoded).
std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path.front() != '/') return out;
  path.remove_prefix(1);
  while (true) {
    const auto slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

// A destination named in a path: a plain core name, no wildcards (a poll consumes one queue),
// nothing reserved ('$': the broker's own queues and exchanges).
Result<model::Destination> destination_from(std::string_view segment, model::DestinationKind kind,
                                           std::size_t max_levels, bool filter = false) {
  auto name = codec::percent_decode(segment);
  if (!name) return unexpected(name.error());
  if (name->empty()) return unexpected(Errc::invalid_argument, "the destination name is empty");
  if (name->front() == '$') {
    return unexpected(Errc::permission_denied, fmt::format("destination names starting with '$' are reserved"));
  }
  // A topic filter (GET /v1/topics/{filter}/events) takes the core's wildcards * and >.
  if (name->find_first_of(filter ? "#+" : "*>#+") != std::string::npos) {
    return unexpected(Errc::invalid_argument, "a destination name here may not contain wildcards (* > # +)");
  }
  const auto levels = static_cast<std::size_t>(std::count(name->begin(), name->end(), '.')) + 1;
  if (levels > max_levels) {
    return unexpected(Errc::invalid_argument, fmt::format("the destination has {} levels, at most {} are allowed "
                                                          "(http.max_destination_levels)",
                                                          levels, max_levels));
  }
  return model::Destination{kind, std::move(*name)};
}

}  // namespace

void Session::route() {
  const Request& req = *current_;
  std::string_view raw = view(req.target());
  // The absolute form ("http://host/v1/...", RFC 9112 3.2.2) names the same resource.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (raw.size() > scheme.size() && boost::beast::iequals(boost::beast::string_view(raw.data(), scheme.size()),
                                                             boost::beast::string_view(scheme.data(), scheme.size()))) {
      raw.remove_prefix(scheme.size());
      const auto slash = raw.find('/');
      raw = slash == std::string_view::npos ? std::string_view("/") : raw.substr(slash);
    }
  }
  const auto target = codec::split_target(raw);
  const auto method = req.method();
  if (relay::codec::is_relay_path(target.path)) {
    handle_relay(target.path, target.query);  // the seed-000 relay (handle_relay.cpp)
    return;
  }
  const auto parts = segments(target.path);

  if (parts.size() == 2 && parts[0] == "v1" && parts[1] == "openapi.json") {
    if (method != bhttp::verb::get && method != bhttp::verb::head) {
      problem(405, "use GET", "Allow: GET, HEAD\r\n");
      return;
    }
    respond(200, "application/json", openapi_json());
    return;
  }
  const bool messages = parts.size() == 4 && parts[0] == "v1" && parts[3] == "messages";
  if (messages && (parts[1] == "queues" || parts[1] == "topics")) {
    const bool queue = parts[1] == "queues";
    if (method != bhttp::verb::post && !(queue && method == bhttp::verb::get)) {
      problem(405, fmt::format("{} is not allowed here", view(req.method_string())),
              queue ? "Allow: GET, POST\r\n" : "Allow: POST\r\n");
      return;
    }
    auto destination = destination_from(parts[2], queue ? model::DestinationKind::queue : model::DestinationKind::topic,
                                         options_.max_destination_levels);
    if (!destination) {
      problem(destination.error());
      return;
    }
    auto params = codec::parse_query(target.query);
    if (!params) {
      problem(params.error());
      return;
    }
    if (method == bhttp::verb::post) {
      handle_send(*destination, *params);
    } else {
      handle_receive(*destination, *params);
    }
    return;
  }
  const bool leases = parts.size() >= 3 && parts.size() <= 4 && parts[0] == "v1" && parts[1] == "leases" &&
                      (parts.back() == "ack" || parts.back() == "nack");
  const bool subscription = (parts.size() == 3 || (parts.size() == 4 && (parts[3] == "messages" || parts[3] == "events"))) &&
                            parts[0] == "v1" && parts[1] == "subscriptions";
  if (leases || subscription) {
    if (leases && method != bhttp::verb::post) {
      problem(405, fmt::format("{} is not allowed here", view(req.method_string())), "Allow: POST\r\n");
      return;
    }
    auto params = codec::parse_query(target.query);
    if (!params) {
      problem(params.error());
      return;
    }
    if (leases) {
      handle_lease(parts.size() == 4 ? parts[2] : std::string_view(), parts.back(), *params);
      return;
    }
    auto name = codec::percent_decode(parts[2]);
    if (!name) {
      problem(name.error());
      return;
    }
    handle_subscription(std::move(*name), parts.size() == 4 ? parts[3] : std::string_view(), *params);
    return;
  }
  const bool events = parts.size() == 4 && parts[0] == "v1" && parts[3] == "events";
  if (events && (parts[1] == "queues" || parts[1] == "topics")) {
    if (method != bhttp::verb::get) {
      problem(405, fmt::format("{} is not allowed here", view(req.method_string())), "Allow: GET\r\n");
      return;
    }
    const bool queue = parts[1] == "queues";
    auto destination = destination_from(parts[2], queue ? model::DestinationKind::queue : model::DestinationKind::topic,
                                         options_.max_destination_levels, !queue);
    auto params = codec::parse_query(target.query);
    if (!destination || !params) {
      problem(destination ? params.error() : destination.error());
      return;
    }
    handle_events(*destination, *params);
    return;
  }
  if (is_console_path(target.path)) {
    handle_console(target.path);
    return;
  }
  if (!parts.empty() && (parts[0] == "healthz" || parts[0] == "readyz" || parts[0] == "metrics" || parts[0] == "admin")) {
    route_operations(parts, target.query);
    return;
  }
  problem(404, fmt::format("no resource at '{}' (see /v1/openapi.json)", target.path.substr(0, 200)));
}

}  // namespace carrier::http
