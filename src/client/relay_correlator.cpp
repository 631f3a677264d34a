#include "client/relay_correlator.hpp"

#include <charconv>

namespace carrier::client {

std::string RelayResponse::get(std::string_view name, std::string_view ns) const {
  auto v = message.find(ns, name);
  return v ? std::string(*v) : std::string();
}

std::string RelayCorrelator::add(std::string kind, Clock::time_point deadline, Done done) {
  const std::uint64_t id = ++next_id_;
  pending_.emplace(id, Pending{std::move(kind), deadline, std::move(done), std::nullopt, {}});
  return std::to_string(id);
}

void RelayCorrelator::sent(std::uint64_t post) {
  for (auto& [id, p] : pending_) {
    if (!p.post) p.post = post;
  }
}

void RelayCorrelator::finish(std::map<std::uint64_t, Pending>::iterator it, Result<std::vector<RelayResponse>> result) {
  auto done = std::move(it->second.done);
  pending_.erase(it);  // before the call: it may add requests
  if (done) done(std::move(result));
}

std::vector<RelayResponse> RelayCorrelator::dispatch(std::uint64_t post, std::vector<relay::codec::Message> messages,
                                                     std::size_t asked_max) {
  std::vector<RelayResponse> unsolicited;
  for (auto& m : messages) {
    RelayResponse r;
    r.kind = std::string(m.find("proxy", "response").value_or(""));
    r.request_id = std::string(m.find("proxy", "requestId").value_or(""));
    r.message = std::move(m);
    std::uint64_t id = 0;
    const auto& rid = r.request_id;
    auto [end, ec] = std::from_chars(rid.data(), rid.data() + rid.size(), id);
    auto it = ec == std::errc() && end == rid.data() + rid.size() ? pending_.find(id) : pending_.end();
    if (r.kind == "message" || it == pending_.end()) {
      unsolicited.push_back(std::move(r));
      continue;
    }
    if (r.kind == "error") {
      const std::string reason = r.get("reason");
      const bool access = reason.find("may not") != std::string::npos || reason.find("refused") != std::string::npos;
      finish(it, unexpected(access ? Errc::permission_denied : Errc::protocol_error, reason));
    } else if (it->second.kind == "search") {
      it->second.results.push_back(std::move(r));
    } else {
      std::vector<RelayResponse> one;
      one.push_back(std::move(r));
      finish(it, std::move(one));
    }
  }
  if (messages.size() < asked_max) {
    for (auto it = pending_.begin(); it != pending_.end();) {
      auto next = std::next(it);
      if (it->second.kind == "search" && it->second.post && *it->second.post <= post) {
        auto results = std::move(it->second.results);
        finish(it, std::move(results));
        next = pending_.begin();  // finish may have added requests: look again
      }
      it = next;
    }
  }
  return unsolicited;
}

void RelayCorrelator::fail_post(std::uint64_t post, const Error& error) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.post && *it->second.post == post) {
      finish(it, unexpected(error));
      it = pending_.begin();
    } else {
      ++it;
    }
  }
}

void RelayCorrelator::fail_all(const Error& error) {
  while (!pending_.empty()) finish(pending_.begin(), unexpected(error));
}

std::optional<RelayCorrelator::Clock::time_point> RelayCorrelator::expire(Clock::time_point now) {
  std::optional<Clock::time_point> earliest;
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.deadline <= now) {
      finish(it, unexpected(Errc::timed_out, "the relay did not answer request " + std::to_string(it->first) + " (" +
                                                 it->second.kind + ") in time"));
      it = pending_.begin();
      earliest.reset();
      continue;
    }
    if (!earliest || it->second.deadline < *earliest) earliest = it->second.deadline;
    ++it;
  }
  return earliest;
}

}  // namespace carrier::client
