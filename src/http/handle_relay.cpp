#include <charconv>

#include <fmt/format.h>

#include "http/session.hpp"
#include "relay/codec/jxme_message.hpp"
#include "relay/relay_service.hpp"

namespace carrier::http {

namespace bhttp = boost::beast::http;

// The seed-000 relay's paths (/unknown-unknown?…, /uuid-…?…; docs/relay.md): parsed here, run
// by relay::RelayService on the peer's shard, answered when its reply comes back.
void Session::handle_relay(std::string_view path, std::string_view query) {
  if (!options_.relay_service) {
    problem(404, "the relay is not running on this listener");
    return;
  }
  // The method first: a DELETE is wrong whatever its query says.
  const auto method = current_->method();
  if (method != bhttp::verb::get && method != bhttp::verb::post) {
    problem(405, fmt::format("{} is not allowed here", view(current_->method_string())), "Allow: GET, POST\r\n");
    return;
  }
  auto target = relay::codec::parse_relay_target(path, query);
  if (!target) {
    problem(400, target.error().detail);
    return;
  }
  relay::RelayCall call{std::move(*target), std::move(current_->body()), 1, user_, std::nullopt};
  if (const auto max = view((*current_)["Carrier-Relay-Max"]); !max.empty()) {
    auto [end, ec] = std::from_chars(max.data(), max.data() + max.size(), call.max);
    if (ec != std::errc() || end != max.data() + max.size()) {
      problem(400, "Carrier-Relay-Max is a number of messages (0: acknowledge only)");
      return;
    }
  }
  // A Carrier-aware peer names the last answer batch it received (Carrier-Relay-Batch of that
  // answer, 0 for none): what later answers carried is handed out again (docs/relay.md).
  if (const auto ack = view((*current_)["Carrier-Relay-Ack"]); !ack.empty()) {
    std::uint64_t received = 0;
    auto [end, ec] = std::from_chars(ack.data(), ack.data() + ack.size(), received);
    if (ec != std::errc() || end != ack.data() + ack.size()) {
      problem(400, "Carrier-Relay-Ack is the number of the last answer batch received (0 for none)");
      return;
    }
    call.received = received;
  }
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());
  options_.relay_service->handle(std::move(call), shard(), [weak, seq](relay::RelayAnswer answer) {
    auto self = weak.lock();
    if (!self || self->is_closing() || seq != self->request_seq_) return;
    if (answer.status == 200) {
      self->respond(200, relay::codec::kMediaType, answer.body,
                    answer.batch == 0 ? std::string() : fmt::format("Carrier-Relay-Batch: {}\r\n", answer.batch));
    } else {
      self->problem(answer.status, answer.reason, answer.status == 429 || answer.status == 503 ? "Retry-After: 1\r\n" : "");
    }
    self->flush();
  });
}

}  // namespace carrier::http
