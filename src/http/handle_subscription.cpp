#include <algorithm>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "http/session.hpp"
#include "net/refusals.hpp"
#include "selector/selector.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

namespace {

// HTTP subscriptions' core names: a namespace of their own, apart from STOMP's and MQTT's.
constexpr std::string_view kNamePrefix = "http:";
constexpr std::size_t kMaxNameBytes = 256;

std::string core_name(std::string_view name) { return std::string(kNamePrefix) + std::string(name); }

nlohmann::json describe(std::string_view name, const core::NamedSubscription& def) {
  nlohmann::json out{{"name", std::string(name)}, {"topic", def.filter}, {"idle_timeout_ms", def.idle_expiry_ms}};
  if (!def.selector.empty()) out["selector"] = def.selector;
  return out;
}

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

}  // namespace

void Session::handle_subscription(std::string name, std::string_view resource, const codec::Params& params) {
  const auto method = current_->method();
  if (name.empty() || name.size() > kMaxNameBytes ||
      std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
    problem(400, fmt::format("a subscription name is 1 to {} bytes, without control characters", kMaxNameBytes));
    return;
  }
  if (!resource.empty()) {
    if (method != bhttp::verb::get) {
      problem(405, fmt::format("{} is not allowed here", view(current_->method_string())), "Allow: GET\r\n");
      return;
    }
    const bool events = resource == "events";
    std::optional<PollParams> p;
    if (!events && !(p = poll_params(params))) return;
    const auto* entry = broker_.named().find(core_name(name));
    if (entry == nullptr) {
      problem(404, fmt::format("no subscription '{}'", name));
      return;
    }
    const model::Destination topic{model::DestinationKind::topic, entry->def.filter};
    if (!allowed(auth::Right::read, topic, "receive from")) return;
    // Attached exactly as made: the same definition is found, not replaced.
    core::SubscribeRequest request{topic, core::AckMode::client_individual, events ? 0 : p->max, nullptr};
    request.subscription_name = core_name(name);
    request.durable = true;
    request.selector = entry->selector;
    request.selector_text = entry->def.selector;
    request.idle_expiry_ms = entry->def.idle_expiry_ms;
    if (events) {
      handle_subscription_events(std::move(request), params);
    } else {
      start_poll(std::move(request), *p);
    }
    return;
  }
  if (!params.empty()) {
    problem(400, fmt::format("unknown query parameter '{}'", params.front().first.substr(0, 64)));
    return;
  }
  if (method == bhttp::verb::put) {
    put_subscription(std::move(name));
    return;
  }
  if (method == bhttp::verb::get || method == bhttp::verb::head) {
    const auto* entry = broker_.named().find(core_name(name));
    if (entry == nullptr) {
      problem(404, fmt::format("no subscription '{}'", name));
      return;
    }
    respond(200, "application/json", dump(describe(name, entry->def)));
    return;
  }
  if (method == bhttp::verb::delete_) {
    const std::uint64_t seq = request_seq_;
    auto weak = std::weak_ptr<Session>(shared_from_this());
    broker_.remove_subscription(core_name(name), [weak, seq, name](Status st) {
      auto self = weak.lock();
      if (!self || self->is_closing() || seq != self->request_seq_) return;
      if (st) {
        self->respond(204, "", "");
      } else if (st.error().code == Errc::not_found) {
        self->problem(404, fmt::format("no subscription '{}'", name));
      } else {
        self->problem(st.error());
      }
      self->flush();
    });
    return;
  }
  problem(405, fmt::format("{} is not allowed here", view(current_->method_string())),
          "Allow: GET, HEAD, PUT, DELETE\r\n");
}

void Session::put_subscription(std::string name) {
  auto doc = nlohmann::json::parse(current_->body(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("topic") || !doc["topic"].is_string()) {
    problem(400, "the body must be a JSON object with \"topic\" (a topic filter) and optionally \"selector\"");
    return;
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "topic" && key != "selector") {
      problem(400, fmt::format("unknown field '{}' (allowed: topic, selector)", key.substr(0, 64)));
      return;
    }
  }
  std::string selector_text;
  if (doc.contains("selector") && !doc["selector"].is_null()) {
    if (!doc["selector"].is_string()) {
      problem(400, "\"selector\" must be a string");
      return;
    }
    selector_text = doc["selector"].get<std::string>();
  }
  const model::Destination topic{model::DestinationKind::topic, doc["topic"].get<std::string>()};
  if (topic.name.empty() || topic.name.front() == '$') {
    problem(400, "\"topic\" must be a topic filter not starting with '$'");
    return;
  }
  const auto levels = static_cast<std::size_t>(std::count(topic.name.begin(), topic.name.end(), '.')) + 1;
  if (levels > options_.max_destination_levels) {
    problem(400, fmt::format("the topic has {} levels, at most {} are allowed (http.max_destination_levels)", levels,
                             options_.max_destination_levels));
    return;
  }
  if (auto st = broker_.check_destination(topic, true); !st) {
    problem(st.error());
    return;
  }
  if (!allowed(auth::Right::read, topic, "subscribe to") ||
      !allowed(auth::Right::create, topic, "make a durable subscription to")) {
    return;
  }
  std::shared_ptr<const selector::Selector> parsed;
  if (!selector_text.empty()) {
    selector::Limits limits;
    limits.max_length = broker_.options().max_selector_bytes;
    auto s = selector::parse(selector_text, limits);
    if (!s) {
      problem(400, s.error().detail);
      return;
    }
    parsed = std::move(*s);
  }
  if (const auto* entry = broker_.named().find(core_name(name))) {
    // The same again is no change; another topic or selector would drop its messages (JMS):
    // that takes a DELETE first.
    if (entry->def.filter != topic.name || entry->def.selector != selector_text) {
      problem(409, fmt::format("subscription '{}' exists with another topic or selector; DELETE it first", name));
      return;
    }
    respond(200, "application/json", dump(describe(name, entry->def)));
    return;
  }
  if (options_.max_subscriptions != 0 && broker_.named_subscriptions(kNamePrefix).size() >= options_.max_subscriptions) {
    net::count_refusal(net::Refusal::subscriptions);
    problem(429, fmt::format("{} HTTP subscriptions exist, the most allowed (http.max_subscriptions)",
                             options_.max_subscriptions));
    return;
  }
  core::SubscribeRequest request{topic, core::AckMode::client_individual, 0, nullptr};
  request.subscription_name = core_name(name);
  request.durable = true;
  request.selector = std::move(parsed);
  request.selector_text = selector_text;
  request.idle_expiry_ms = options_.subscription_idle_timeout_ms;
  core::NamedSubscription def{core_name(name), topic.name, true, selector_text};
  def.idle_expiry_ms = options_.subscription_idle_timeout_ms;
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  // 201 once the definition is durable and every shard matches into it.
  auto made = broker_.subscribe(std::move(request), [weak, seq, body = dump(describe(name, def))](Status st) {
    auto self = weak.lock();
    if (!self || self->is_closing() || seq != self->request_seq_) return;
    if (st) {
      self->respond(201, "application/json", body);
    } else {
      self->problem(st.error());
    }
    self->flush();
  });
  if (!made) problem(made.error());
}

}  // namespace carrier::http
