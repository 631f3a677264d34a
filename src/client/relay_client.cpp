#include "client/relay_client.hpp"

#include <charconv>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/codec/body_encoding.hpp"
#include "net/asio.hpp"

namespace carrier::client {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

namespace {

// exchange()'s wait for the POST that only acknowledges (Carrier-Relay-Max: 0).
constexpr std::uint32_t kAckOnly = UINT32_MAX;

// The relay address a peer names in its targets (Listing 2): the service and the seed's
// net group; Carrier reads only that it is there.
constexpr std::string_view kEndpoint = "EndpointService:jxta-NetGroup/uuid-DEADBEEFDEAFBABAFEEDBABE0000000F05";

// A problem+json answer's detail, enough for an error message (no JSON parser needed here).
std::string problem_detail(const std::string& body) {
  const auto at = body.find("\"detail\"");
  if (at == std::string::npos) return body.substr(0, 200);
  auto start = body.find('"', body.find(':', at) + 1);
  if (start == std::string::npos) return body.substr(0, 200);
  std::string out;
  for (auto i = start + 1; i < body.size() && body[i] != '"'; ++i) {
    if (body[i] == '\\' && i + 1 < body.size()) ++i;
    out.push_back(body[i]);
  }
  return out;
}

Error http_error(int status, const std::string& reason) {
  const Errc code = status == 401 || status == 403 ? Errc::permission_denied
                    : status == 404              ? Errc::not_found
                    : status == 429 || status == 503 ? Errc::unavailable
                                                     : Errc::protocol_error;
  return Error{code, "HTTP " + std::to_string(status) + ": " + reason};
}

}  // namespace

RelayClient::RelayClient(RelayClientOptions options)
    : options_(std::move(options)),
      // Request ids that an earlier run of the same peer did not use: a response it left in the
      // mailbox answers none of ours.
      correlator_(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                 std::chrono::system_clock::now().time_since_epoch())
                                                 .count())) {
  relay_address_ = "http://" + options_.host + ":" + std::to_string(options_.port) + "/" + std::string(kEndpoint);
}

RelayClient::~RelayClient() { close(); }

Result<RelayClient::Http> RelayClient::exchange(bool post, const std::string& target, const std::string& body,
                                                std::uint32_t wait_ms) {
  // One exchange per connection, with a deadline (the wait the relay may take, plus the
  // timeout): an io_context of its own, run on this thread until the exchange ends.
  net::asio::io_context io;
  beast::tcp_stream stream(io);
  bhttp::request<bhttp::string_body> req{post ? bhttp::verb::post : bhttp::verb::get, target, 11};
  req.set(bhttp::field::host, options_.host + ":" + std::to_string(options_.port));
  req.set(bhttp::field::connection, "close");
  if (!options_.user.empty()) {
    req.set(bhttp::field::authorization, "Basic " + http::codec::base64_encode(options_.user + ":" + options_.password));
  }
  if (post) {
    req.set(bhttp::field::content_type, std::string(relay::codec::kMediaType));
    req.set("Carrier-Relay-Max", std::to_string(wait_ms == kAckOnly ? 0 : options_.max_messages));
    req.set("Carrier-Relay-Ack", std::to_string(last_batch_));
    req.body() = body;
  }
  req.prepare_payload();
  bhttp::response<bhttp::string_body> res;
  beast::flat_buffer buffer;
  boost::system::error_code failure;
  bool finished = false;
  const bool long_poll = post && wait_ms > 0 && wait_ms != kAckOnly;
  if (wait_ms == kAckOnly) wait_ms = 0;
  if (long_poll) {
    // A request made meanwhile cuts the wait short (interrupt_); one made just before is sent
    // at once instead.
    std::lock_guard lock(mu_);
    if (!outgoing_.empty() || stopping_) return Http{};
    interrupt_ = [&io] { io.stop(); };
  }
  stream.expires_after(options_.timeout + std::chrono::milliseconds(wait_ms));
  net::tcp::resolver resolver(io);
  resolver.async_resolve(options_.host, std::to_string(options_.port), [&](auto ec, auto results) {
    if (ec) return void(failure = ec);
    stream.async_connect(results, [&](auto ec, auto) {
      if (ec) return void(failure = ec);
      bhttp::async_write(stream, req, [&](auto ec, std::size_t) {
        if (ec) return void(failure = ec);
        bhttp::async_read(stream, buffer, res, [&](auto ec, std::size_t) {
          if (ec) failure = ec;
          finished = true;
        });
      });
    });
  });
  io.run();
  if (long_poll) {
    std::lock_guard lock(mu_);
    interrupt_ = nullptr;
  }
  if (!finished && !failure) return Http{};  // interrupted: an answer dropped here comes again (Carrier-Relay-Ack)
  if (failure) {
    return unexpected(failure == beast::error::timeout ? Errc::timed_out : Errc::io_error,
                      "relay at " + options_.host + ":" + std::to_string(options_.port) + ": " + failure.message());
  }
  Http out;
  out.status = static_cast<int>(res.result_int());
  out.batch = std::string(res["Carrier-Relay-Batch"]);
  if (out.status == 200) {
    out.body = std::move(res.body());
  } else {
    out.reason = problem_detail(res.body());
  }
  return out;
}

Result<std::string> RelayClient::pid() {
  auto r = exchange(false, "/unknown-unknown?0,-1," + relay_address_ + "/pid", {}, 0);
  if (!r) return unexpected(r.error());
  if (r->status != 200) return unexpected(http_error(r->status, r->reason));
  auto messages = relay::codec::decode_all(r->body, {});
  if (!messages || messages->empty()) return unexpected(Errc::protocol_error, "the relay's pid answer does not decode");
  auto id = messages->front().find("relay", "peerid");
  if (!id || id->empty()) return unexpected(Errc::protocol_error, "the relay's pid answer has no relay:peerid");
  return std::string(*id);
}

Result<std::string> RelayClient::connect(std::string peer) {
  if (thread_.joinable()) return unexpected(Errc::invalid_argument, "already connected");
  if (peer.empty()) {
    auto id = pid();
    if (!id) return id;
    peer = std::move(*id);
  }
  auto r = exchange(false, "/" + peer + "?0,-1," + relay_address_ + "/connect," + std::to_string(options_.lease_ms) +
                               ",keep,other",
                    {}, 0);
  if (!r) return unexpected(r.error());
  if (r->status != 200) return unexpected(http_error(r->status, r->reason));
  auto messages = relay::codec::decode_all(r->body, {});
  if (!messages || messages->empty() || messages->front().find("relay", "response") != "connected") {
    return unexpected(Errc::protocol_error, "the relay's connect answer is not `connected`");
  }
  auto lease = messages->front().find("relay", "lease").value_or("0");
  std::from_chars(lease.data(), lease.data() + lease.size(), lease_ms_);
  peer_ = std::move(peer);
  thread_ = std::thread([this] { run(); });
  return peer_;
}

void RelayClient::ask(std::string kind, std::vector<std::pair<std::string, std::string>> fields,
                      std::vector<relay::codec::Element> extra, RelayCorrelator::Done done) {
  std::lock_guard lock(mu_);
  if (failed_ || !thread_.joinable()) {
    done(unexpected(failed_ ? *failed_ : Error{Errc::invalid_argument, "connect first"}));
    return;
  }
  const bool is_listen = kind == "listen";
  auto id = correlator_.add(kind, RelayCorrelator::Clock::now() + options_.timeout,
                            [this, done = std::move(done), is_listen](Responses r) {
                              if (is_listen && r) listening_ = true;  // on the poll thread, mu_ held
                              done(std::move(r));
                            });
  relay::codec::Message m;
  m.namespaces = {"proxy"};
  m.add("proxy", "request", std::move(kind));
  m.add("proxy", "requestId", std::move(id));
  for (auto& [name, value] : fields) m.add("proxy", std::move(name), std::move(value));
  for (auto& e : extra) m.elements.push_back(std::move(e));
  outgoing_.push_back(std::move(m));
  if (interrupt_) interrupt_();
  cv_.notify_all();
}

std::future<RelayClient::Response> RelayClient::ask_one(std::string kind,
                                                       std::vector<std::pair<std::string, std::string>> fields,
                                                       std::vector<relay::codec::Element> extra) {
  auto promise = std::make_shared<std::promise<Response>>();
  auto future = promise->get_future();
  ask(std::move(kind), std::move(fields), std::move(extra), [promise](Responses r) {
    if (!r) return promise->set_value(unexpected(r.error()));
    if (r->empty()) return promise->set_value(unexpected(Errc::protocol_error, "the relay answered nothing"));
    promise->set_value(std::move(r->front()));
  });
  return future;
}

std::future<RelayClient::Response> RelayClient::create(std::string type, std::string name, std::string arg) {
  std::vector<std::pair<std::string, std::string>> fields{{"type", std::move(type)}, {"name", std::move(name)}};
  if (!arg.empty()) fields.emplace_back("arg", std::move(arg));
  return ask_one("create", std::move(fields));
}

std::future<RelayClient::Responses> RelayClient::search(std::string type, std::string attr, std::string value,
                                                        unsigned threshold) {
  std::vector<std::pair<std::string, std::string>> fields{
      {"type", std::move(type)}, {"attr", std::move(attr)}, {"value", std::move(value)}};
  if (threshold > 0) fields.emplace_back("threshold", std::to_string(threshold));
  auto promise = std::make_shared<std::promise<Responses>>();
  auto future = promise->get_future();
  ask("search", std::move(fields), {}, [promise](Responses r) { promise->set_value(std::move(r)); });
  return future;
}

std::future<RelayClient::Response> RelayClient::join(std::string group_id, std::string password) {
  return ask_one("join", {{"id", std::move(group_id)}, {"arg", std::move(password)}});
}

std::future<RelayClient::Response> RelayClient::listen(std::string pipe_id) {
  return ask_one("listen", {{"id", std::move(pipe_id)}});
}

std::future<RelayClient::Response> RelayClient::send(std::string pipe_id, std::vector<relay::codec::Element> elements) {
  return ask_one("send", {{"id", std::move(pipe_id)}}, std::move(elements));
}

Result<RelayResponse> RelayClient::poll(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !inbox_.empty() || failed_ || stopping_; });
  if (!inbox_.empty()) {
    auto m = std::move(inbox_.front());
    inbox_.pop_front();
    if (inbox_.empty()) cv_.notify_all();  // the poll thread fetches more
    return m;
  }
  if (failed_) return unexpected(*failed_);
  if (unreachable_) {
    return unexpected(Errc::timed_out, "no pipe message came; the relay is not answering: " + unreachable_->detail);
  }
  return unexpected(Errc::timed_out, "no pipe message came");
}

void RelayClient::collect() {
  std::lock_guard lock(mu_);
  listening_ = true;
  cv_.notify_all();
}

void RelayClient::on_message(std::function<void(const RelayResponse&)> fn) {
  std::lock_guard lock(mu_);
  on_message_ = std::move(fn);
}

void RelayClient::stop_with(const Error& error) {
  if (!failed_) failed_ = error;
  correlator_.fail_all(error);
  cv_.notify_all();
}

void RelayClient::run() {
  std::unique_lock lock(mu_);
  auto retry_delay = std::chrono::milliseconds(100);
  while (!stopping_) {
    // Polls while there are requests to send, answers still to come or pipes listened to;
    // else sleeps until a request is made.
    correlator_.expire(RelayCorrelator::Clock::now());
    // Pipe messages are fetched only once poll() took those already here: the next POST
    // acknowledges them at the relay, and the inbox stays bounded.
    const bool collect = listening_ && inbox_.empty();
    if (outgoing_.empty() && !collect && correlator_.empty()) {
      cv_.wait(lock, [&] { return stopping_ || !outgoing_.empty() || (listening_ && inbox_.empty()); });
      continue;
    }
    std::string body;
    for (const auto& m : outgoing_) {
      if (!relay::codec::encode(m, body)) correlator_.fail_all(Error{Errc::invalid_argument, "a request too large"});
    }
    const bool has_requests = !outgoing_.empty();
    outgoing_.clear();
    const std::uint64_t post = ++posts_;
    correlator_.sent(post);
    lock.unlock();
    // With requests the relay answers once they are answered; without, it waits for a message.
    const std::uint32_t wait = has_requests ? 0 : options_.poll_wait_ms;
    auto r = exchange(true, "/" + peer_ + "?" + std::to_string(wait) + ",-1," + relay_address_, body, wait);
    std::vector<RelayResponse> pipe_messages;
    lock.lock();
    if (!r) {
      // The answer never came: its requests may have run; pipe messages come again (the ack
      // names the last batch that did arrive). Tries again after a pause that grows.
      correlator_.fail_post(post, r.error());
      unreachable_ = r.error();
      cv_.wait_for(lock, retry_delay, [&] { return stopping_; });
      retry_delay = std::min(retry_delay * 2, std::chrono::milliseconds(5000));
      continue;
    }
    retry_delay = std::chrono::milliseconds(100);
    unreachable_.reset();
    if (r->status == 0) continue;  // a long poll cut short for a request
    if (r->status != 200) {
      if (r->status == 429) {
        correlator_.fail_post(post, http_error(r->status, r->reason));
        continue;  // the next poll collects
      }
      stop_with(http_error(r->status, r->reason));  // 404: the lease ran out; 403: not ours
      break;
    }
    acked_batch_ = last_batch_;  // this POST named it
    if (!r->batch.empty()) std::from_chars(r->batch.data(), r->batch.data() + r->batch.size(), last_batch_);
    auto decoded = relay::codec::decode_all(r->body, {});
    if (!decoded) {
      stop_with(Error{Errc::protocol_error, "the relay's answer does not decode: " + decoded.error().detail});
      break;
    }
    for (auto& m : correlator_.dispatch(post, std::move(*decoded), options_.max_messages)) {
      if (m.kind != "message") continue;  // an answer to a request that timed out
      if (on_message_) {
        pipe_messages.push_back(std::move(m));
      } else {
        inbox_.push_back(std::move(m));
      }
    }
    cv_.notify_all();
    if (!pipe_messages.empty()) {
      // The callback may make requests (which take mu_).
      auto fn = on_message_;
      lock.unlock();
      for (const auto& m : pipe_messages) fn(m);
      lock.lock();
    }
  }
  correlator_.fail_all(failed_ ? *failed_ : Error{Errc::shutting_down, "the relay client was closed"});
  cv_.notify_all();
  // Leaving with every pipe message taken by poll(): acknowledges the last answer, so that the
  // peer's next run does not get it again. What is still in the inbox is not acknowledged.
  if (!failed_ && inbox_.empty() && last_batch_ > acked_batch_) {
    lock.unlock();
    (void)exchange(true, "/" + peer_ + "?0,-1," + relay_address_, {}, kAckOnly);
  }
}

void RelayClient::close() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (interrupt_) interrupt_();
    cv_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

}  // namespace carrier::client
