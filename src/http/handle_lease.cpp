#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "http/session.hpp"

namespace carrier::http {

namespace {

// What one lease's ending came to, for the batch form's answer.
struct BatchEnding {
  std::size_t remaining = 0;
  nlohmann::json ended = nlohmann::json::array();
  nlohmann::json not_found = nlohmann::json::array();
  std::optional<Error> failure;  // the first other error (the store failing)
};

}  // namespace

void Session::handle_lease(std::string_view id, std::string_view action, const codec::Params& params) {
  const bool nack = action == "nack";
  if (auto unknown = codec::unknown_param(params, {"requeue"})) {
    problem(400, fmt::format("unknown query parameter '{}' (allowed: requeue, with nack)", unknown->substr(0, 64)));
    return;
  }
  auto how = nack ? core::LeaseEnd::nack : core::LeaseEnd::ack;
  if (auto text = codec::find_param(params, "requeue")) {
    auto flag = codec::parse_flag(*text, "requeue");
    if (!flag) {
      problem(flag.error());
      return;
    }
    if (!nack) {
      problem(400, "requeue is only for nack");
      return;
    }
    if (!*flag) how = core::LeaseEnd::reject;
  }
  const std::uint64_t seq = request_seq_;
  auto weak = std::weak_ptr<Session>(shared_from_this());

  if (!id.empty()) {
    auto decoded = codec::percent_decode(id);
    auto lease = decoded ? core::LeaseId::parse(*decoded) : std::nullopt;
    if (!lease) {
      problem(404, fmt::format("no lease '{}'", decoded ? decoded->substr(0, 64) : std::string(id.substr(0, 64))));
      return;
    }
    // 204 once it has taken effect: an ack of a persistent message is durable by then.
    broker_.end_lease(*lease, how, [weak, seq](Status st) {
      auto self = weak.lock();
      if (!self || self->is_closing() || seq != self->request_seq_) return;
      if (st) {
        self->respond(204, "", "");
      } else {
        self->problem(st.error());
      }
      self->flush();
    });
    return;
  }

  // The batch form: a JSON array of lease ids; each ends on its own (some may be gone).
  auto doc = nlohmann::json::parse(current_->body(), nullptr, false);
  if (doc.is_discarded() || !doc.is_array() || doc.empty()) {
    problem(400, "the body must be a non-empty JSON array of lease ids");
    return;
  }
  if (doc.size() > options_.max_batch_messages) {
    problem(400, fmt::format("{} lease ids, at most {} are allowed (http.max_batch_messages)", doc.size(),
                             options_.max_batch_messages));
    return;
  }
  std::vector<std::pair<std::string, std::optional<core::LeaseId>>> ids;
  for (const auto& item : doc) {
    if (!item.is_string()) {
      problem(400, "the body must be a non-empty JSON array of lease ids (strings)");
      return;
    }
    auto text = item.get<std::string>();
    auto lease = core::LeaseId::parse(text);
    ids.emplace_back(std::move(text), lease);
  }
  auto ending = std::make_shared<BatchEnding>();
  ending->remaining = ids.size();
  auto one_done = [weak, seq, ending](std::string text, Status st) {
    if (st) {
      ending->ended.push_back(std::move(text));
    } else if (st.error().code == Errc::not_found) {
      ending->not_found.push_back(std::move(text));
    } else if (!ending->failure) {
      ending->failure = st.error();
    }
    if (--ending->remaining != 0) return;
    auto self = weak.lock();
    if (!self || self->is_closing() || seq != self->request_seq_) return;
    if (ending->failure) {
      self->problem(*ending->failure);
    } else {
      nlohmann::json body{{"ended", std::move(ending->ended)}, {"not_found", std::move(ending->not_found)}};
      self->respond(200, "application/json", body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    self->flush();
  };
  for (auto& [text, lease] : ids) {
    if (!lease) {
      one_done(std::move(text), unexpected(Errc::not_found, "not a lease id"));
      continue;
    }
    broker_.end_lease(*lease, how, [one_done, text = std::move(text)](Status st) mutable {
      one_done(std::move(text), std::move(st));
    });
  }
}

}  // namespace carrier::http
