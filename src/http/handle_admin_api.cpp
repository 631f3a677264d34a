#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>

#include "admin/admin_service.hpp"
#include "admin/queue_work.hpp"
#include "core/queue_maintenance.hpp"
#include "model/queue_key.hpp"
#include "http/codec/body_encoding.hpp"
#include "http/codec/problem.hpp"
#include "http/session.hpp"
#include "selector/selector.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxPageRows = 10000;
constexpr std::size_t kMaxBrowse = 1000;
constexpr std::size_t kDefaultBrowse = 20;
constexpr std::size_t kBodyPreviewBytes = 1024;
constexpr std::size_t kDefaultMoveLimit = 100000;
constexpr std::string_view kJson = "application/json";

constexpr std::size_t kMaxCloseReasonBytes = 120;  // fits a WebSocket close frame (123)

json to_json(const admin::QueueRow& q, std::int64_t now_ms) {
  json out{{"depth", q.depth},         {"bytes", q.bytes},       {"unacked", q.unacked},
           {"consumers", q.consumers}, {"enqueued", q.enqueued}, {"durable", q.durable}};
  // null when nothing is ready; never negative (a producer may stamp a time ahead of ours).
  out["oldest_age_ms"] = q.oldest_timestamp_ms == 0 ? json(nullptr) : json(std::max<std::int64_t>(0, now_ms - q.oldest_timestamp_ms));
  return out;
}

json to_json(const admin::ConnectionRow& c) {
  return json{{"id", c.id},
              {"protocol", c.protocol},
              {"peer", c.peer},
              {"shard", c.shard},
              {"since_ms", c.connected_at_ms},
              {"queued_bytes", c.queued_bytes},
              {"client_id", c.client_id},
              {"user", c.user},
              {"messages_in", c.messages.in},
              {"messages_out", c.messages.out},
              {"in_per_second", c.messages.in_per_second},
              {"out_per_second", c.messages.out_per_second}};
}

json to_json(const admin::TopicRow& t) {
  return json{{"name", t.filter},   {"subscriptions", t.subscriptions}, {"consumers", t.consumers},
              {"depth", t.depth},   {"bytes", t.bytes},                 {"unacked", t.unacked},
              {"enqueued", t.enqueued}};
}

// An administrator's reason for closing a connection, as every protocol can carry it.
Result<std::string> close_reason(const codec::Params& params) {
  const auto text = codec::find_param(params, "reason");
  if (!text || text->empty()) return std::string("closed by an administrator");
  if (text->size() > kMaxCloseReasonBytes) {
    return unexpected(Errc::invalid_argument, fmt::format("reason is longer than {} bytes", kMaxCloseReasonBytes));
  }
  if (!codec::is_utf8(*text)) return unexpected(Errc::invalid_argument, "reason is not UTF-8");
  for (const unsigned char ch : *text) {
    if (ch < 0x20 || ch == 0x7F) return unexpected(Errc::invalid_argument, "reason has a control character");
  }
  return std::string(*text);
}

json to_json(const core::BrowsedMessage& b) {
  const model::Message& m = *b.message;
  json headers = json::object();
  for (const auto& [name, value] : m.properties) headers[name] = value;
  const std::string_view body = m.body ? std::string_view(*m.body) : std::string_view();
  const std::string_view preview = body.substr(0, kBodyPreviewBytes);
  json out{{"id", m.id.to_string()},
           {"destination", m.destination.uri()},
           {"priority", m.priority},
           {"persistent", m.persistent},
           {"timestamp_ms", m.timestamp_ms},
           {"expires_ms", m.expires_ms},
           {"redelivered", b.redelivered},
           {"delivery_count", b.delivery_count},
           {"content_type", m.content_type},
           {"headers", std::move(headers)},
           {"body_bytes", body.size()}};
  if (!m.correlation_id.empty()) out["correlation_id"] = m.correlation_id;
  if (!m.type.empty()) out["type"] = m.type;
  if (codec::is_utf8(preview)) {
    out["body_preview"] = std::string(preview);
  } else {
    out["body_preview_base64"] = codec::base64_encode(preview);
  }
  return out;
}

// The disk free limit ([journal] disk_free_limit_bytes) and its last reading; "watched": false
// for the stores that write no local disk (memory, postgres).
json disk_json(const core::DiskAlarm* disk) {
  if (disk == nullptr) return json{{"watched", false}};
  return json{{"watched", true},
              {"free_bytes", disk->free_bytes()},
              {"limit_bytes", disk->limit()},
              {"alarm", disk->holding()},
              {"alarms", disk->alarms()}};
}

double mean_ms(const core::LatencyHistogram& h) {
  return h.count() == 0 ? 0.0 : static_cast<double>(h.sum_ms) / static_cast<double>(h.count());
}

// `name`'s value, a whole number in [min, max]; `fallback` when absent.
Result<std::size_t> number_param(const codec::Params& params, std::string_view name, std::size_t min, std::size_t max,
                                 std::size_t fallback) {
  const auto text = codec::find_param(params, name);
  if (!text) return fallback;
  auto n = codec::parse_bounded(*text, name, min, max);
  if (!n) return unexpected(n.error());
  return static_cast<std::size_t>(*n);
}

Result<admin::PageRequest> page_request(const codec::Params& params) {
  admin::PageRequest r;
  if (auto v = codec::find_param(params, "filter")) r.filter = std::string(*v);
  if (auto v = codec::find_param(params, "sort")) r.sort = std::string(*v);
  if (auto v = codec::find_param(params, "order")) {
    if (*v != "asc" && *v != "desc") return unexpected(Errc::invalid_argument, "order must be asc or desc");
    r.descending = *v == "desc";
  }
  auto offset = number_param(params, "offset", 0, SIZE_MAX, 0);
  if (!offset) return unexpected(offset.error());
  auto limit = number_param(params, "limit", 1, kMaxPageRows, r.limit);
  if (!limit) return unexpected(limit.error());
  r.offset = *offset;
  r.limit = *limit;
  return r;
}

Result<core::MessageFilter> filter_from(const codec::Params& params) {
  const auto text = codec::find_param(params, "selector");
  if (!text || text->empty()) return core::MessageFilter{};
  auto parsed = selector::parse(*text);
  if (!parsed) return unexpected(parsed.error());
  return core::MessageFilter([s = std::move(*parsed)](const model::Message& m) { return selector::matches(*s, m); });
}

// "/queue/x", "queue:x" or "x" (a queue) for a move's target.
Result<model::Destination> target_from(std::string_view text) {
  for (std::string_view prefix : {"/queue/", "queue:"}) {
    if (text.starts_with(prefix)) text.remove_prefix(prefix.size());
  }
  if (text.empty()) return unexpected(Errc::invalid_argument, "'to' names no queue");
  if (text.front() == '$' || text.find_first_of("*>#+,") != std::string_view::npos) {
    return unexpected(Errc::invalid_argument, "'to' must be one plain queue name");
  }
  return model::Destination{model::DestinationKind::queue, std::string(text)};
}

using Reply = std::function<void(int, std::string_view, std::string)>;

json destination_json(const admin::QueueRow& row, std::string_view kind, std::string_view name, std::int64_t now_ms) {
  json out = to_json(row, now_ms);
  out["kind"] = kind;
  out["name"] = name;
  return out;
}

// GET /admin/v1/queues/{name} (a queue, else a temporary queue of that name) and
// /admin/v1/subscriptions/{name}: the row the destination list shows, or 404.
void describe_destination(core::Broker& broker, bool queue, std::string name, Reply reply) {
  using model::QueueKey;
  using model::QueueKind;
  if (!queue) {
    auto key = QueueKey::format(QueueKind::subscription, name);
    admin::find_queue(broker, std::move(key), [&broker, name, reply](std::optional<admin::QueueRow> row) {
      if (!row) return reply(404, {}, fmt::format("no subscription '{}'", name.substr(0, 200)));
      reply(200, kJson, destination_json(*row, "subscription", name, broker.now_ms()).dump());
    });
    return;
  }
  auto key = QueueKey::format(QueueKind::queue, name);
  admin::find_queue(broker, std::move(key), [&broker, name, reply](std::optional<admin::QueueRow> row) {
    if (row) return reply(200, kJson, destination_json(*row, "queue", name, broker.now_ms()).dump());
    admin::find_queue(broker, QueueKey::format(QueueKind::temp_queue, name),
                      [&broker, name, reply](std::optional<admin::QueueRow> temp) {
                        if (!temp) return reply(404, {}, fmt::format("no queue '{}'", name.substr(0, 200)));
                        reply(200, kJson, destination_json(*temp, "temp-queue", name, broker.now_ms()).dump());
                      });
  });
}

}  // namespace

void Session::route_admin_api(admin::Service& service, const std::vector<std::string_view>& parts,
                              std::string_view query) {
  const auto method = current_->method();
  const bool get = method == bhttp::verb::get || method == bhttp::verb::head;
  if (parts.size() < 3 || parts[1] != "v1") {
    problem(404, "the admin API is under /admin/v1/ (see docs/admin.md)");
    return;
  }
  auto params = codec::parse_query(query);
  if (!params) {
    problem(params.error());
    return;
  }
  const std::string_view resource = parts[2];
  if (resource == "federation") return route_federation_admin(parts);
  auto reply = responder();
  auto fail = [this](const Error& e) { problem(e); };

  if (parts.size() == 3 && resource == "overview") {
    if (!get) return problem(405, "use GET", "Allow: GET, HEAD\r\n");
    service.totals(broker_, [&service, reply](const admin::ShardSnapshot& s) {
      const auto& info = service.info();
      const auto store = service.store_health();
      const auto ready = service.readiness();
      json listeners = json::array();
      for (const auto& l : info.listeners) {
        listeners.push_back(json{{"protocol", l.protocol}, {"address", l.address}, {"port", l.port}});
      }
      json connections = json::object();
      std::size_t total = 0;
      for (const auto& [protocol, n] : s.connections_by_protocol) {
        connections[protocol] = n;
        total += n;
      }
      connections["total"] = total;
      const auto& c = s.counters;
      json body{
          {"version", info.version},
          {"uptime_seconds", service.uptime_seconds()},
          {"shards", info.shards},
          {"ready", ready.ready},
          {"not_ready_because", ready.reasons},
          {"store",
           {{"kind", info.store_kind},
            {"healthy", store.last_ok && !store.closed},
            {"batches", store.batches},
            {"records", store.records},
            {"failures", store.failures},
            {"commit_ms_mean", mean_ms(store.commit_latency)}}},
          {"memory", {{"used_bytes", service.memory_used()}, {"limit_bytes", service.memory_limit()}}},
          {"disk", disk_json(service.disk_alarm())},
          {"messages",
           {{"published", c.published},
            {"delivered", c.delivered},
            {"redelivered", c.redelivered},
            {"dead_lettered", c.dead_lettered},
            {"ready", s.stats.messages_ready},
            {"unacked", s.stats.messages_unacked},
            {"scheduled", s.stats.scheduled}}},
          {"destinations",
           {{"queues", s.stats.queues},
            {"topic_subscriptions", s.stats.topic_subscriptions},
            {"named_subscriptions", s.stats.named_subscriptions},
            {"retained", s.stats.retained}}},
          {"connections", std::move(connections)},
          {"listeners", std::move(listeners)},
          // Federation links and relay peers get their own arrays here when they land.
      };
      reply(200, kJson, body.dump());
    });
    return;
  }

  if (parts.size() == 3 && resource == "destinations") {
    if (!get) return problem(405, "use GET", "Allow: GET, HEAD\r\n");
    if (auto unknown = codec::unknown_param(*params, {"kind", "filter", "sort", "order", "offset", "limit"})) {
      return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
    }
    auto request = page_request(*params);
    if (!request) return fail(request.error());
    std::string kind(codec::find_param(*params, "kind").value_or(""));
    if (!kind.empty() && kind != "queue" && kind != "temp-queue" && kind != "subscription") {
      return problem(400, "kind must be queue, temp-queue or subscription");
    }
    service.destinations(broker_, std::move(kind), std::move(*request), [reply, now = broker_.now_ms()](auto page) {
      if (!page) return reply(codec::status_for(page.error().code), {}, page.error().detail);
      json items = json::array();
      for (const auto& r : page->rows) items.push_back(destination_json(r.stats, r.kind, r.name, now));
      reply(200, kJson, json{{"total", page->total}, {"items", std::move(items)}}.dump());
    });
    return;
  }

  if (resource == "connections" && parts.size() == 3) {
    if (!get) return problem(405, "use GET", "Allow: GET, HEAD\r\n");
    if (auto unknown = codec::unknown_param(*params, {"filter", "sort", "order", "offset", "limit"})) {
      return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
    }
    auto request = page_request(*params);
    if (!request) return fail(request.error());
    service.connections(broker_, std::move(*request), [reply](auto page) {
      if (!page) return reply(codec::status_for(page.error().code), {}, page.error().detail);
      json items = json::array();
      for (const auto& r : page->rows) items.push_back(to_json(r));
      reply(200, kJson, json{{"total", page->total}, {"items", std::move(items)}}.dump());
    });
    return;
  }

  if (resource == "topics" && parts.size() == 3) {
    if (!get) return problem(405, "use GET", "Allow: GET, HEAD\r\n");
    if (auto unknown = codec::unknown_param(*params, {"filter", "sort", "order", "offset", "limit"})) {
      return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
    }
    auto request = page_request(*params);
    if (!request) return fail(request.error());
    service.topics(broker_, std::move(*request), [reply](auto page) {
      if (!page) return reply(codec::status_for(page.error().code), {}, page.error().detail);
      json items = json::array();
      for (const auto& r : page->rows) items.push_back(to_json(r));
      reply(200, kJson, json{{"total", page->total}, {"items", std::move(items)}}.dump());
    });
    return;
  }

  if (resource == "connections" && parts.size() == 4) {
    if (method != bhttp::verb::delete_) return problem(405, "use DELETE", "Allow: DELETE\r\n");
    if (auto unknown = codec::unknown_param(*params, {"reason"})) {
      return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
    }
    auto id = codec::parse_bounded(parts[3], "connection id", 1, UINT64_MAX);
    if (!id) return fail(id.error());
    auto reason = close_reason(*params);
    if (!reason) return fail(reason.error());
    service.close_connection(broker_, *id, std::move(*reason), [&service, reply, id = *id](bool found) {
      if (!found) return reply(404, {}, fmt::format("no connection {}", id));
      service.changed();
      reply(204, {}, {});
    });
    return;
  }

  // /admin/v1/{queues|subscriptions}/{name}: one destination's row, looked up on its owner shard
  const bool queue = resource == "queues";
  if ((queue || resource == "subscriptions") && parts.size() == 4) {
    if (!get) return problem(405, "use GET", "Allow: GET, HEAD\r\n");
    if (!params->empty()) {
      return problem(400, fmt::format("unknown query parameter '{}'", params->front().first.substr(0, 64)));
    }
    auto name = codec::percent_decode(parts[3]);
    if (!name) return fail(name.error());
    if (name->empty()) return problem(400, "the name is empty");
    if (name->front() == '$') return problem(403, "names starting with '$' are the broker's own state");
    describe_destination(broker_, queue, std::move(*name), reply);
    return;
  }

  // /admin/v1/{queues|subscriptions}/{name}/{messages|move}
  if ((queue || resource == "subscriptions") && parts.size() == 5 && (parts[4] == "messages" || parts[4] == "move")) {
    auto name = codec::percent_decode(parts[3]);
    if (!name) return fail(name.error());
    if (name->empty()) return problem(400, "the name is empty");
    if (name->front() == '$') return problem(403, "names starting with '$' are the broker's own state");
    const std::string key = (queue ? "queue:" : "subscription:") + *name;
    if (parts[4] == "move") {
      if (method != bhttp::verb::post) return problem(405, "use POST", "Allow: POST\r\n");
      if (auto unknown = codec::unknown_param(*params, {"to", "selector", "limit", "copy"})) {
        return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
      }
      auto to = target_from(codec::find_param(*params, "to").value_or(""));
      if (!to) return fail(to.error());
      auto which = filter_from(*params);
      if (!which) return fail(which.error());
      auto limit = number_param(*params, "limit", 1, SIZE_MAX, kDefaultMoveLimit);
      if (!limit) return fail(limit.error());
      bool copy = false;
      if (auto v = codec::find_param(*params, "copy")) {
        auto f = codec::parse_flag(*v, "copy");
        if (!f) return fail(f.error());
        copy = *f;
      }
      if (to->key() == key) return problem(400, "'to' is the queue the messages are in");
      admin::move_in_chunks(broker_, key, std::move(*to), std::move(*which), *limit, !copy,
                            [&service, reply, copy](Result<std::size_t> n) {
                              service.changed();  // a move may have begun even if it failed
                              if (!n) return reply(codec::status_for(n.error().code), {}, n.error().detail);
                              reply(200, kJson, json{{copy ? "copied" : "moved", *n}}.dump());
                            });
      return;
    }
    if (get) {
      if (auto unknown = codec::unknown_param(*params, {"offset", "limit"})) {
        return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
      }
      auto offset = number_param(*params, "offset", 0, SIZE_MAX, 0);
      if (!offset) return fail(offset.error());
      auto limit = number_param(*params, "limit", 1, kMaxBrowse, kDefaultBrowse);
      if (!limit) return fail(limit.error());
      core::browse_queue(broker_, key, *offset, *limit, [reply](Result<std::vector<core::BrowsedMessage>> r) {
        if (!r) return reply(codec::status_for(r.error().code), {}, r.error().detail);
        json items = json::array();
        for (const auto& b : *r) items.push_back(to_json(b));
        reply(200, kJson, items.dump());
      });
      return;
    }
    if (method == bhttp::verb::delete_) {
      if (auto unknown = codec::unknown_param(*params, {"selector", "limit"})) {
        return problem(400, fmt::format("unknown query parameter '{}'", unknown->substr(0, 64)));
      }
      auto which = filter_from(*params);
      if (!which) return fail(which.error());
      auto limit = number_param(*params, "limit", 1, SIZE_MAX, SIZE_MAX);
      if (!limit) return fail(limit.error());
      admin::purge_in_chunks(broker_, key, std::move(*which), *limit, [&service, reply](Result<std::size_t> n) {
        service.changed();
        if (!n) return reply(codec::status_for(n.error().code), {}, n.error().detail);
        reply(200, kJson, json{{"purged", *n}}.dump());
      });
      return;
    }
    if (method == bhttp::verb::post && queue) {
      // A test message: the ordinary send, by an administrator (to any queue name but `$` ones).
      // The next snapshot is taken after it (it may be read before the send completes).
      service.changed();
      handle_send(model::Destination{model::DestinationKind::queue, *name}, *params);
      return;
    }
    return problem(405, fmt::format("{} is not allowed here", view(current_->method_string())),
                   queue ? "Allow: GET, HEAD, POST, DELETE\r\n" : "Allow: GET, HEAD, DELETE\r\n");
  }
  problem(404, fmt::format("no admin resource at '{}' (see docs/admin.md)", resource.substr(0, 100)));
}

}  // namespace carrier::http
