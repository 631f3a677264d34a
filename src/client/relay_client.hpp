#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/result.hpp"
#include "client/relay_correlator.hpp"
#include "relay/codec/jxme_message.hpp"

namespace carrier::client {

struct RelayClientOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::string user;      // HTTP Basic, when the broker has users
  std::string password;
  std::int64_t lease_ms = 0;  // asked at connect; 0: the relay's maximum
  std::chrono::milliseconds timeout{10'000};  // one HTTP exchange, and a request's answer
  // How long a poll waits at the relay for a pipe message when no request goes with it.
  std::uint32_t poll_wait_ms = 1000;
  std::uint32_t max_messages = 100;  // Carrier-Relay-Max
};

// Seed 000's PeerNetwork over plain HTTP (docs/relay.md): connect (pid and a lease), create,
// join, search, listen, send; the seed's poll() returns the next pipe message. Requests are
// correlated by requestId and answered through futures; a poll thread carries them to the
// relay in POSTs and collects what waits, so callers never poll in a loop. Each POST names the
// last answer batch received (Carrier-Relay-Ack), so an answer lost on the way is handed out
// again rather than taken as received.
//
// Runs on: any thread. connect() blocks; the requests return futures completed on the poll
// thread; poll() waits on a condition variable. One peer per RelayClient.
class RelayClient {
 public:
  using Response = Result<RelayResponse>;
  using Responses = Result<std::vector<RelayResponse>>;

  explicit RelayClient(RelayClientOptions options);
  ~RelayClient();
  RelayClient(const RelayClient&) = delete;
  RelayClient& operator=(const RelayClient&) = delete;

  // A new peer id from the relay (the seed's pid request).
  Result<std::string> pid();
  // Connects `peer` (a new one from pid() when empty) with the lease asked for, and starts
  // the poll thread. Returns the peer id.
  Result<std::string> connect(std::string peer = {});
  const std::string& peer() const { return peer_; }
  std::int64_t lease_ms() const { return lease_ms_; }

  // type "PIPE" (arg "JxtaUnicast" or "JxtaPropagate") or "GROUP": success with type, name, id, arg.
  std::future<Response> create(std::string type, std::string name, std::string arg = {});
  // Every result (type, name, id, arg); attr "name" or "id", value with `*`, threshold 0: the relay's maximum.
  std::future<Responses> search(std::string type, std::string attr, std::string value, unsigned threshold = 0);
  std::future<Response> join(std::string group_id, std::string password = {});
  // From then on the pipe's messages come out of poll().
  std::future<Response> listen(std::string pipe_id);
  // `elements`: the application elements (an empty-namespace `message` is the body).
  std::future<Response> send(std::string pipe_id, std::vector<relay::codec::Element> elements);

  // The next pipe message (a `message` response: proxy id is the pipe), waiting up to
  // `timeout`: Errc::timed_out if none came, or the error that stopped the client.
  Result<RelayResponse> poll(std::chrono::milliseconds timeout);
  // Polls for pipe messages of listens made before (by an earlier run of this peer): the
  // client otherwise polls only once a listen of its own succeeded.
  void collect();
  // Pipe messages go to `fn` (on the poll thread) instead of poll().
  void on_message(std::function<void(const RelayResponse&)> fn);

  void close();

 private:
  struct Http {
    int status = 0;  // 0: a long poll cut short (a request to send, or close())
    std::string body;
    std::string batch;  // Carrier-Relay-Batch
    std::string reason; // a problem's detail
  };
  Result<Http> exchange(bool post, const std::string& target, const std::string& body, std::uint32_t wait_ms);
  // Queues a request for the poll thread; `done` runs there (with mu_ held) once it is answered.
  void ask(std::string kind, std::vector<std::pair<std::string, std::string>> fields,
           std::vector<relay::codec::Element> extra, RelayCorrelator::Done done);
  std::future<Response> ask_one(std::string kind, std::vector<std::pair<std::string, std::string>> fields,
                                std::vector<relay::codec::Element> extra = {});
  void run();
  void stop_with(const Error& error);  // with mu_ held

  RelayClientOptions options_;
  std::string relay_address_;
  std::string peer_;
  std::int64_t lease_ms_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  RelayCorrelator correlator_;                       // under mu_
  std::vector<relay::codec::Message> outgoing_;      // under mu_: requests not sent yet
  std::deque<RelayResponse> inbox_;                  // under mu_: pipe messages for poll()
  std::function<void(const RelayResponse&)> on_message_;  // under mu_
  bool listening_ = false;                           // under mu_: a listen succeeded
  bool stopping_ = false;
  std::optional<Error> failed_;                      // under mu_: what ended the client
  std::optional<Error> unreachable_;                 // under mu_: the last POST failed (retrying)
  std::function<void()> interrupt_;                  // under mu_: ends the long poll under way
  std::uint64_t last_batch_ = 0;                     // poll thread: the last answer batch received
  std::uint64_t acked_batch_ = 0;                    // poll thread: the last one a POST named
  std::uint64_t posts_ = 0;                          // poll thread
  std::thread thread_;
};

}  // namespace carrier::client
