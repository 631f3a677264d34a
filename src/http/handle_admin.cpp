#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "admin/admin_service.hpp"
#include "admin/prometheus_text.hpp"
#include "http/session.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

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
  if (!service->may_administer(user_, peer_address())) {
    problem(403, service->options().users.empty()
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
