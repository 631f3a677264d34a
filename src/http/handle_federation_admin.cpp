// /admin/v1/federation/links: the federation's links listed, added and removed at runtime, and
// its carrier_federation_* series appended to /metrics (docs/federation.md, docs/metrics.md).
// Thin: the federation protocol does the work behind protocol::FederationLinks.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "admin/prometheus_text.hpp"
#include "http/codec/problem.hpp"
#include "http/session.hpp"
#include "protocol/federation_links.hpp"
#include "protocol/protocol_set.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

constexpr std::string_view kJsonType = "application/json";
constexpr std::size_t kMaxNameBytes = 200;
constexpr std::size_t kMaxCredentialBytes = 1024;

protocol::FederationLinks* federation_of(const protocol::ProtocolSet* protocols) {
  if (protocols == nullptr) return nullptr;
  return dynamic_cast<protocol::FederationLinks*>(protocols->find("federation"));
}

json to_json(const protocol::FederationLinks::Link& l) {
  return json{{"name", l.name},
              {"direction", l.direction},
              {"connect", l.connect},
              {"tls", l.tls},
              {"state", l.state},
              {"peer_node", l.peer_node},
              {"session", l.session},
              {"pushed", l.pushed},
              {"push_failures", l.push_failures},
              {"received", l.received},
              {"replies_sent", l.replies_sent},
              {"bytes_in", l.bytes_in},
              {"bytes_out", l.bytes_out},
              {"in_flight", l.in_flight},
              {"throttled", l.throttled},
              {"backlog", l.in_flight + l.throttled},
              {"forwarding", l.forwarding},
              {"demand", l.demand},
              {"max_rate", l.max_rate},
              {"max_rate_unit", l.max_rate_unit},
              {"paused", l.paused}};
}

// A link to add, from POST's JSON body: {"name", "connect": "HOST:PORT", "username",
// "password", "cost", "tls", "ca_file", "server_name", "cert_file", "key_file"}; everything but
// name and connect optional.
Result<protocol::FederationLinks::NewLink> new_link_from(std::string_view body) {
  using Link = protocol::FederationLinks::NewLink;
  const json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return unexpected(Errc::invalid_argument, "the body must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    static constexpr std::string_view kFields[] = {"name",    "connect",     "username",  "password", "cost",
                                                   "tls",     "ca_file",     "server_name", "cert_file", "key_file"};
    if (std::find(std::begin(kFields), std::end(kFields), key) == std::end(kFields)) {
      return unexpected(Errc::invalid_argument, fmt::format("unknown field '{}'", key.substr(0, 64)));
    }
  }
  auto text = [&j](const char* key, std::size_t max, bool required) -> Result<std::string> {
    if (!j.contains(key)) {
      if (required) return unexpected(Errc::invalid_argument, fmt::format("'{}' is required", key));
      return std::string();
    }
    if (!j[key].is_string()) return unexpected(Errc::invalid_argument, fmt::format("'{}' must be a string", key));
    auto s = j[key].get<std::string>();
    if (s.size() > max) return unexpected(Errc::invalid_argument, fmt::format("'{}' is over {} bytes", key, max));
    if (s.find('\0') != std::string::npos) return unexpected(Errc::invalid_argument, fmt::format("'{}' holds a NUL", key));
    return s;
  };
  Link link;
  auto name = text("name", kMaxNameBytes, true);
  if (!name) return unexpected(name.error());
  if (name->empty()) return unexpected(Errc::invalid_argument, "'name' is empty");
  for (unsigned char c : *name) {
    if (c < 0x21 || c == 0x7f || c == '/') {
      return unexpected(Errc::invalid_argument, "'name' may hold no space, control character or '/'");
    }
  }
  link.name = std::move(*name);
  auto connect = text("connect", 300, true);
  if (!connect) return unexpected(connect.error());
  const auto colon = connect->rfind(':');
  if (colon == std::string::npos || colon == 0) return unexpected(Errc::invalid_argument, "'connect' must be HOST:PORT");
  std::string host = connect->substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string_view port_text = std::string_view(*connect).substr(colon + 1);
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
    return unexpected(Errc::invalid_argument, "'connect' must end with a port from 1 to 65535");
  }
  link.host = std::move(host);
  link.port = static_cast<std::uint16_t>(port);
  auto user = text("username", kMaxCredentialBytes, false);
  if (!user) return unexpected(user.error());
  auto pass = text("password", kMaxCredentialBytes, false);
  if (!pass) return unexpected(pass.error());
  link.username = std::move(*user);
  link.password = std::move(*pass);
  if (j.contains("cost")) {
    if (!j["cost"].is_number_integer() || j["cost"].get<std::int64_t>() < 0 || j["cost"].get<std::int64_t>() > 1'000'000) {
      return unexpected(Errc::invalid_argument, "'cost' must be an integer from 0 to 1000000");
    }
    link.cost = static_cast<std::int32_t>(j["cost"].get<std::int64_t>());
  }
  if (j.contains("tls")) {
    if (!j["tls"].is_boolean()) return unexpected(Errc::invalid_argument, "'tls' must be true or false");
    link.tls = j["tls"].get<bool>();
  }
  for (auto [key, field] : {std::pair{"ca_file", &link.ca_file}, std::pair{"server_name", &link.server_name},
                            std::pair{"cert_file", &link.cert_file}, std::pair{"key_file", &link.key_file}}) {
    auto value = text(key, 4096, false);
    if (!value) return unexpected(value.error());
    *field = std::move(*value);
  }
  return link;
}

}  // namespace

void Session::route_federation_admin(const std::vector<std::string_view>& parts) {
  const auto method = current_->method();
  // An unknown path gets the router's own "no admin resource" answer, whether federation runs or not.
  if (parts.size() < 4 || parts[3] != "links" || parts.size() > 5) {
    return problem(404, "no admin resource at '/admin/v1/federation/...': the federation's resource is "
                        "/admin/v1/federation/links (see docs/federation.md)");
  }
  // The route's methods are the same whether federation runs or not (405 before 404).
  const bool list = parts.size() == 4;
  const bool read = method == bhttp::verb::get || method == bhttp::verb::head;
  if (list && !read && method != bhttp::verb::post) return problem(405, "use GET or POST", "Allow: GET, HEAD, POST\r\n");
  if (!list && method != bhttp::verb::delete_) return problem(405, "use DELETE", "Allow: DELETE\r\n");
  auto* federation = federation_of(protocols_);
  if (federation == nullptr) return problem(404, "federation is not enabled on this broker ([federation])");
  auto reply = responder();
  const auto shard = broker_.shard();
  if (list) {
    if (read) {
      federation->report(shard, [reply](protocol::FederationLinks::Report r) {
        json links = json::array();
        for (const auto& l : r.links) links.push_back(to_json(l));
        reply(200, kJsonType,
              json{{"node_id", r.node_id},
                   {"dedup", {{"size", r.dedup_size}, {"hits", r.dedup_hits}}},
                   {"reply_routes", r.reply_routes},
                   {"links", std::move(links)}}
                  .dump());
      });
      return;
    }
    auto link = new_link_from(current_->body());
    if (!link) return problem(link.error());
    federation->add_link(std::move(*link), shard, [reply](Status st) {
      if (!st) return reply(codec::status_for(st.error().code), {}, st.error().detail);
      reply(201, kJsonType, R"({"added":true})");
    });
    return;
  }
  auto name = codec::percent_decode(parts[4]);
  if (!name) return problem(name.error());
  federation->remove_link(std::move(*name), shard, [reply](Status st) {
    if (!st) return reply(codec::status_for(st.error().code), {}, st.error().detail);
    reply(204, {}, {});
  });
}

void append_federation_metrics(const protocol::ProtocolSet* protocols, model::ShardId shard, std::string text,
                               std::function<void(std::string)> done) {
  auto* federation = federation_of(protocols);
  if (federation == nullptr) return done(std::move(text));
  federation->report(shard, [text = std::move(text), done = std::move(done)](protocol::FederationLinks::Report r) mutable {
    admin::PrometheusText out;
    auto per_link = [&](std::string_view name, std::string_view type, std::string_view help, auto value_of) {
      out.family(name, type, help);
      for (const auto& l : r.links) {
        out.sample(name, {{"link", l.name}, {"direction", l.direction}}, static_cast<std::uint64_t>(value_of(l)));
      }
    };
    using L = protocol::FederationLinks::Link;
    per_link("carrier_federation_link_up", "gauge", "1 while the link is established", [](const L& l) { return l.state == "up" ? 1 : 0; });
    per_link("carrier_federation_pushed_total", "counter", "Messages pushed over the link and acknowledged by the far node",
             [](const L& l) { return l.pushed; });
    per_link("carrier_federation_push_failures_total", "counter", "Pushes the far node refused",
             [](const L& l) { return l.push_failures; });
    per_link("carrier_federation_received_total", "counter", "Pushes taken in from the far node (duplicates excluded)",
             [](const L& l) { return l.received; });
    per_link("carrier_federation_replies_sent_total", "counter", "Replies sent back over the link (sendback)",
             [](const L& l) { return l.replies_sent; });
    per_link("carrier_federation_bytes_out_total", "counter", "Link frame bytes written", [](const L& l) { return l.bytes_out; });
    per_link("carrier_federation_bytes_in_total", "counter", "Link frame bytes read", [](const L& l) { return l.bytes_in; });
    per_link("carrier_federation_backlog", "gauge", "Pushes awaiting an answer or the rate limit",
             [](const L& l) { return l.in_flight + l.throttled; });
    per_link("carrier_federation_paused_selectors", "gauge", "Selectors paused toward the far node (stopForwarding)",
             [](const L& l) { return l.paused.size(); });
    per_link("carrier_federation_max_rate", "gauge", "The far node's setMaxRate (0: none), in max_rate_unit",
             [](const L& l) { return l.max_rate; });
    out.scalar("carrier_federation_dedup_hits_total", "counter", "Duplicate pushes dropped by the dedup window",
               r.dedup_hits);
    out.scalar("carrier_federation_dedup_window_size", "gauge", "Message ids in the dedup window", r.dedup_size);
    out.scalar("carrier_federation_reply_routes", "gauge", "Ways back for replies known", r.reply_routes);
    text += out.text();
    done(std::move(text));
  });
}

}  // namespace carrier::http
