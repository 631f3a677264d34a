#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.hpp"
#include "relay/codec/jxme_message.hpp"

namespace carrier::client {

// One message from the relay, with what RelayClient callers read most pulled out.
struct RelayResponse {
  std::string kind;        // proxy:response: success, error, result, message
  std::string request_id;  // proxy:requestId
  relay::codec::Message message;

  // The content of proxy:`name` (or of `ns`:`name`), empty when absent.
  std::string get(std::string_view name, std::string_view ns = "proxy") const;
};

// Which request each message from the relay answers (seed 000's requestId), for RelayClient:
// pure, no I/O, no clock of its own (the caller passes `now`), so it is tested alone.
// - create, join, listen, send complete on their one response (an `error` one fails them with
//   Errc::permission_denied if it names access, else Errc::protocol_error, its reason the detail);
// - a search collects its `result` messages and completes at the end of the first poll
//   answer, from a POST sent with or after it, that did not fill the asked maximum: the relay
//   holds a POST's answer until its requests' responses are in, so nothing more is coming;
// - `message` responses (pipe messages) are not for a request: dispatch returns them;
// - a request not answered by its deadline fails with Errc::timed_out (expire()).
// Runs on: the owning client's poll thread (not thread-safe).
class RelayCorrelator {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(Result<std::vector<RelayResponse>>)>;

  // Request ids count up from `first_id`.
  explicit RelayCorrelator(std::uint64_t first_id = 1) : next_id_(first_id - 1) {}

  // A request of `kind` ("search" collects results); returns its request id ("1", "2", ...).
  std::string add(std::string kind, Clock::time_point deadline, Done done);
  // The requests added so far are in POST number `post` (sent now).
  void sent(std::uint64_t post);
  // The answer to POST number `post`: its messages, and the maximum it asked for. Completes what
  // they answer; returns the pipe messages (and anything answering no known request).
  std::vector<RelayResponse> dispatch(std::uint64_t post, std::vector<relay::codec::Message> messages,
                                      std::size_t asked_max);
  // Fails the requests in POST `post` (its answer never came: they may or may not have run).
  void fail_post(std::uint64_t post, const Error& error);
  void fail_all(const Error& error);
  // Fails what is past its deadline; returns the earliest deadline left, if any.
  std::optional<Clock::time_point> expire(Clock::time_point now);

  std::size_t size() const { return pending_.size(); }
  bool empty() const { return pending_.empty(); }

 private:
  struct Pending {
    std::string kind;
    Clock::time_point deadline;
    Done done;
    std::optional<std::uint64_t> post;  // the POST that carried it
    std::vector<RelayResponse> results;  // a search's
  };
  void finish(std::map<std::uint64_t, Pending>::iterator it, Result<std::vector<RelayResponse>> result);

  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, Pending> pending_;  // by request id
};

}  // namespace carrier::client
