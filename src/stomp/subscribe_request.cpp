#include "stomp/subscribe_request.hpp"

#include <charconv>

#include <fmt/format.h>

namespace carrier::stomp {

namespace {

bool is_true(const std::string* header) { return header != nullptr && *header == "true"; }

}  // namespace

std::variant<SubscribeTarget, Refused> read_subscribe_target(const codec::Frame& frame, codec::Version version) {
  const auto* destination = frame.header("destination");
  if (destination == nullptr) return Refused{Refusal::missing_header, "destination"};
  const auto* id = frame.header("id");
  if (id == nullptr && version != codec::Version::v1_0) return Refused{Refusal::missing_header, "id"};
  // STOMP 1.0 made the id optional; the destination then names the subscription.
  return SubscribeTarget{id != nullptr ? *id : *destination, *destination};
}

std::variant<SubscribeOptions, Refused> read_subscribe_options(const codec::Frame& frame,
                                                               const SubscribeContext& context) {
  SubscribeOptions options;
  const bool v1_0 = context.version == codec::Version::v1_0;
  if (const auto* ack = frame.header("ack")) {
    if (*ack == "client") {
      options.ack_mode = core::AckMode::client;
    } else if (*ack == "client-individual" && !v1_0) {
      options.ack_mode = core::AckMode::client_individual;
    } else if (*ack == "client-individual") {
      return Refused{Refusal::invalid_ack_mode,
                     "ack:client-individual does not exist in STOMP 1.0: use auto or client"};
    } else if (*ack != "auto") {
      return Refused{Refusal::invalid_ack_mode,
                     v1_0 ? fmt::format("ack must be auto or client in STOMP 1.0, got '{}'", *ack)
                          : fmt::format("ack must be auto, client or client-individual, got '{}'", *ack)};
    }
  }
  // The first of the two spellings present is read; the other is ignored.
  for (const char* name : {"activemq.prefetchSize", "prefetch-count"}) {
    const auto* p = frame.header(name);
    if (p == nullptr) continue;
    auto r = std::from_chars(p->data(), p->data() + p->size(), options.prefetch);
    if (r.ec != std::errc() || r.ptr != p->data() + p->size()) {
      return Refused{Refusal::invalid_prefetch, fmt::format("{} must be a non-negative integer, got '{}'", name, *p)};
    }
    break;
  }
  // An empty selector is no selector (JMS).
  if (const auto* text = frame.header("selector"); text != nullptr && !text->empty()) {
    selector::Limits limits;
    limits.max_length = context.max_selector_bytes;
    auto parsed = selector::parse(*text, limits);
    if (!parsed) return Refused{Refusal::invalid_selector, parsed.error().detail};
    options.selector = std::move(*parsed);
    options.selector_text = *text;
  }
  if (context.kind != model::DestinationKind::topic) return options;
  // ActiveMQ: client-id on CONNECT + activemq.subscriptionName. RabbitMQ: durable:true (and
  // auto-delete:false) with the subscription id as the name. Shared (JMS 2.0): shared:true
  // with subscription-name, not tied to a client.
  const auto* amq_name = frame.header("activemq.subscriptionName");
  const auto* sub_name = frame.header("subscription-name");
  const bool is_shared = is_true(frame.header("shared"));
  // persistent: RabbitMQ's older spelling of durable.
  const bool is_durable = is_true(frame.header("durable")) || is_true(frame.header("persistent")) ||
                          (!is_shared && (amq_name != nullptr || sub_name != nullptr));
  std::string name = amq_name ? *amq_name : sub_name ? *sub_name : std::string();
  if (is_shared) {
    if (name.empty()) return Refused{Refusal::shared_subscription_without_name, "shared:true needs subscription-name"};
    options.subscription_name = "stomp-shared:" + name;
    options.durable = is_durable;
  } else if (is_durable) {
    if (name.empty()) name = std::string(context.id);
    if ((amq_name != nullptr || sub_name != nullptr) && context.client_id.empty()) {
      return Refused{Refusal::durable_subscription_without_client_id,
                     "send client-id on CONNECT to name a durable subscription"};
    }
    options.subscription_name = durable_subscription_name(context.client_id, name);
    options.durable = true;
    options.durable_name = options.subscription_name;
  }
  options.no_local = is_true(frame.header("activemq.noLocal"));
  return options;
}

std::string durable_subscription_name(std::string_view client_id, std::string_view name) {
  // The client id is escaped as STOMP escapes header values (`:` as `\c`, `\` as `\\`), so the
  // first `:` after the prefix ends it and ids "a:b" + name "c" and "a" + name "b:c" differ. Ids
  // without either character keep the spelling stored before escaping existed.
  std::string out = "stomp:";
  out.reserve(client_id.size() + name.size() + 8);
  for (const char c : client_id) {
    if (c == ':') {
      out += "\\c";
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += c;
    }
  }
  out += ':';
  out += name;
  return out;
}

std::variant<UnsubscribeRequest, Refused> read_unsubscribe(const codec::Frame& frame, codec::Version version) {
  UnsubscribeRequest request;
  const auto* id = frame.header("id");
  if (id == nullptr && version == codec::Version::v1_0) id = frame.header("destination");
  // UNSUBSCRIBE with durable:true or persistent:true (RabbitMQ) or the subscription name
  // (ActiveMQ) ends a durable subscription; without them it only detaches from it.
  const auto* amq_name = frame.header("activemq.subscriptionName");
  const auto* named = amq_name != nullptr ? amq_name : frame.header("subscription-name");
  request.end_durable = is_true(frame.header("durable")) || is_true(frame.header("persistent")) || named != nullptr;
  if (id == nullptr && named == nullptr) return Refused{Refusal::missing_header, "id"};
  if (id != nullptr) request.id = *id;
  if (named != nullptr) request.name = *named;
  return request;
}

}  // namespace carrier::stomp
