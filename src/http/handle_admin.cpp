#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "admin/admin_service.hpp"
#include "admin/prometheus_text.hpp"
#include "http/codec/query.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// An ACL `admin` right on some queues only (`queue admin orders.>`): the calls on one such queue
// (its figures, browse, purge, and a move whose target is one too). The rest of the API needs
// it everywhere.
bool may_administer_named_queues(auth::Permissions& permissions, const std::vector<std::string_view>& parts,
                                 std::string_view query) {
  if ((parts.size() != 4 && parts.size() != 5) || parts[1] != "v1" || parts[2] != "queues") return false;
  if (parts.size() == 5 && parts[4] != "messages" && parts[4] != "move") return false;
  auto name = codec::percent_decode(parts[3]);
  if (!name || name->empty()) return false;
  if (!permissions.allows(auth::Right::admin, auth::AclKind::queue, *name)) return false;
  if (parts.size() == 4 || parts[4] != "move") return true;
  auto params = codec::parse_query(query);
  if (!params) return false;
  std::string_view to = codec::find_param(*params, "to").value_or("");
  for (std::string_view prefix : {"/queue/", "queue:"}) {
    if (to.starts_with(prefix)) to.remove_prefix(prefix.size());
  }
  return !to.empty() && permissions.allows(auth::Right::admin, auth::AclKind::queue, to);
}

}  // namespace

bool Session::is_health_probe(std::string_view path) { return path == "/healthz" || path == "/readyz"; }

void Session::route_operations(const std::vector<std::string_view>& parts, std::string_view query) {
  const auto method = current_->method();
  admin::Service* service = options_.admin;
  if (service == nullptr) {
    problem(404, "the admin API is not enabled on this listener");
    return;
  }
  if (parts[0] != "admin" && parts.size() != 1) {
    problem(404, fmt::format("no resource at /{}/... (see docs/admin.md)", parts[0]));
    return;
  }
  if (parts[0] != "admin") {
    if (method != bhttp::verb::get && method != bhttp::verb::head) {
      problem(405, "use GET", "Allow: GET, HEAD\r\n");
      return;
    }
    if (parts[0] == "healthz") {
      // Alive: this shard answered.
      respond(200, "application/json", R"({"status":"alive"})");
    } else if (parts[0] == "readyz") {
      const auto r = service->readiness();
      nlohmann::json body{{"status", r.ready ? "ready" : "not ready"}, {"reasons", r.reasons}};
      respond(r.ready ? 200 : 503, "application/json", body.dump());
    } else {
      service->metrics(broker_, [reply = responder(), protocols = protocols_, shard = broker_.shard()](std::string text) {
        append_federation_metrics(protocols, shard, std::move(text), [reply](std::string all) {
          reply(200, admin::PrometheusText::kContentType, std::move(all));
        });
      });
    }
    return;
  }
  const bool acl = authenticator_.access().enabled();
  std::optional<bool> everywhere;
  if (acl) {
    everywhere = permissions_.allows(auth::Right::admin, auth::AclKind::queue, ">") &&
                 permissions_.allows(auth::Right::admin, auth::AclKind::topic, ">");
  }
  if (!service->may_administer(user_, peer_address(), everywhere) &&
      !(acl && may_administer_named_queues(permissions_, parts, query))) {
    problem(403, acl ? auth::access_denied_detail(user_, "administer", "/" + std::string(parts.size() > 2 ? parts[2] : "admin"))
                 : service->options().users.empty()
                     ? "the admin API answers only clients on a loopback address (set [admin] users)"
                     : "this user has no admin right ([admin] users)");
    return;
  }
  route_admin_api(*service, parts, query);
}

std::function<void(int, std::string_view, std::string)> Session::responder() {
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  return [weak, seq](int status, std::string_view content_type, std::string body) {
    auto s = weak.lock();
    if (!s || s->is_closing() || seq != s->request_seq_ || !s->current_) return;
    if (status >= 400) {
      s->problem(status, body);
    } else {
      s->respond(status, content_type, body);
    }
  };
}

}  // namespace carrier::http
