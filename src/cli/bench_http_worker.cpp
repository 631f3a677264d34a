// carrier bench over HTTP (docs/http.md): producers POST each message on a keep-alive connection
// (--receipts N: up to N requests pipelined before their 201s are read), consumers long-poll
// GET .../messages on theirs. Plain blocking sockets: one thread per connection, as the other
// workers have.

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/bench_worker.hpp"
#include "http/codec/body_encoding.hpp"

namespace carrier::cli::bench {

namespace {

// How long a long poll waits for its first message: short, so a run's end is seen soon.
constexpr std::string_view kPollWait = "1s";
constexpr unsigned kPollMax = 1000;

Error io_error(std::string what) {
  return Error{Errc::io_error, what + ": " + std::strerror(errno)};
}

// One keep-alive HTTP/1.1 connection, blocking. Responses are read by Content-Length (the
// broker always sends it, or 204 without a body).
class HttpConnection {
 public:
  HttpConnection() = default;
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;
  ~HttpConnection() { close(); }

  Status connect(const std::string& host, std::uint16_t port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list) != 0 || list == nullptr) {
      return unexpected(Errc::io_error, "cannot resolve " + host);
    }
    for (addrinfo* a = list; a != nullptr && fd_ < 0; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) != 0) close();
    }
    freeaddrinfo(list);
    if (fd_ < 0) return unexpected(io_error("connect to " + host + ":" + std::to_string(port)));
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return ok();
  }

  Status write(std::string_view data) {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return unexpected(io_error("send"));
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return ok();
  }

  // The next response's status; its body in `body`.
  Result<int> read_response(std::string& body) {
    std::size_t end = 0;
    while ((end = in_.find("\r\n\r\n")) == std::string::npos) {
      if (auto s = fill(); !s) return unexpected(s.error());
    }
    const std::string_view head(in_.data(), end);
    if (head.size() < 12 || !head.starts_with("HTTP/1.1 ")) return unexpected(Errc::protocol_error, "not an HTTP response");
    const int status = std::atoi(std::string(head.substr(9, 3)).c_str());
    std::size_t length = 0;
    for (std::size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
      const auto line = head.substr(at + 2, head.find("\r\n", at + 2) - at - 2);
      if (line.size() > 15 && strncasecmp(line.data(), "content-length:", 15) == 0) {
        length = std::strtoull(std::string(line.substr(15)).c_str(), nullptr, 10);
      }
    }
    while (in_.size() < end + 4 + length) {
      if (auto s = fill(); !s) return unexpected(s.error());
    }
    body.assign(in_, end + 4, length);
    in_.erase(0, end + 4 + length);
    return status;
  }

  // Ends a blocking read from another thread.
  void shutdown() {
    if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  Status fill() {
    char buffer[65536];
    ssize_t n;
    do {
      n = ::recv(fd_, buffer, sizeof buffer, 0);
    } while (n < 0 && errno == EINTR);
    if (n == 0) return unexpected(Errc::io_error, "the broker closed the connection");
    if (n < 0) return unexpected(io_error("recv"));
    in_.append(buffer, static_cast<std::size_t>(n));
    return ok();
  }

  int fd_ = -1;
  std::string in_;
};

std::string authorization(const Options& o) {
  if (o.login.empty()) return {};
  return "Authorization: Basic " + http::codec::base64_encode(o.login + ":" + o.passcode) + "\r\n";
}

class HttpProducer final : public Producer {
 public:
  using Producer::Producer;

  Status connect() override {
    const Options& o = control_.options();
    window_ = std::max(1u, o.receipts);
    head_ = "POST /v1/queues/" + o.dest + "/messages" + (o.persistent ? "?persistent=true" : "") +
            " HTTP/1.1\r\nHost: " + o.server() + "\r\nContent-Type: application/octet-stream\r\n" + authorization(o) +
            "Content-Length: ";
    return connection_.connect(o.host, o.port);
  }

  std::string confirmed_by() const override { return "201"; }

 protected:
  Status send(std::string_view body) override {
    request_.assign(head_);
    request_.append(std::to_string(body.size()));
    request_.append("\r\n\r\n");
    request_.append(body);
    if (auto s = connection_.write(request_); !s) return s;
    ++outstanding_;
    while (outstanding_ >= window_) {
      if (auto s = read_one(); !s) return s;
    }
    return ok();
  }

  Status finish() override {
    while (outstanding_ > 0) {
      if (auto s = read_one(); !s) return s;
    }
    connection_.close();
    return ok();
  }

 private:
  Status read_one() {
    auto status = connection_.read_response(response_);
    if (!status) return unexpected(status.error());
    --outstanding_;
    confirm(*status == 201);
    if (*status != 201 && !reported_failure_) {
      reported_failure_ = true;
      control_.error("producer " + std::to_string(index_) + ": HTTP " + std::to_string(*status) + " " +
                     response_.substr(0, 200));
    }
    return ok();
  }

  HttpConnection connection_;
  std::string head_;
  std::string request_;
  std::string response_;
  unsigned window_ = 1;
  unsigned outstanding_ = 0;
  bool reported_failure_ = false;
};

class HttpConsumer final : public Consumer {
 public:
  using Consumer::Consumer;

  ~HttpConsumer() override { stop(); }

  Status start() override {
    const Options& o = control_.options();
    const unsigned max = std::min(kPollMax, o.prefetch.value_or(kPollMax));
    request_ = "GET /v1/queues/" + o.dest + "/messages?max=" + std::to_string(max) + "&wait=" + std::string(kPollWait) +
               " HTTP/1.1\r\nHost: " + o.server() + "\r\n" + authorization(o) + "\r\n";
    if (auto s = connection_.connect(o.host, o.port); !s) return s;
    thread_ = std::thread([this] { poll_loop(); });
    return ok();
  }

  void stop() override {
    if (!thread_.joinable()) return;
    stopping_.store(true);
    connection_.shutdown();  // ends the poll under way; what it held goes back to the queue
    thread_.join();
    connection_.close();
  }

 private:
  void poll_loop() {
    std::string body;
    while (!stopping_.load()) {
      if (auto s = connection_.write(request_); !s) return report(s.error());
      auto status = connection_.read_response(body);
      if (!status) return report(status.error());
      if (*status == 204) continue;
      if (*status != 200) {
        return report(Error{Errc::protocol_error, "HTTP " + std::to_string(*status) + " " + body.substr(0, 200)});
      }
      auto messages = nlohmann::json::parse(body, nullptr, false);
      if (!messages.is_array()) return report(Error{Errc::protocol_error, "a poll answered with something not a JSON array"});
      for (const auto& m : messages) {
        if (auto text = m.find("body"); text != m.end()) {
          on_body(text->get_ref<const std::string&>());
        } else if (auto b64 = m.find("body_base64"); b64 != m.end()) {
          auto bytes = http::codec::base64_decode(b64->get_ref<const std::string&>());
          if (bytes) on_body(*bytes);
        }
      }
    }
  }

  void report(const Error& e) {
    if (!stopping_.load()) control_.error("consumer " + std::to_string(index_) + ": " + e.to_string());
  }

  HttpConnection connection_;
  std::string request_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: it uses the members above
};

}  // namespace

std::unique_ptr<Producer> make_http_producer(RunControl& control, std::uint32_t index, std::uint64_t quota) {
  return std::make_unique<HttpProducer>(control, index, quota);
}

std::unique_ptr<Consumer> make_http_consumer(RunControl& control, std::uint32_t index) {
  return std::make_unique<HttpConsumer>(control, index);
}

}  // namespace carrier::cli::bench
