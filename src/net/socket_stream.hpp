#pragma once

#include <memory>
#include <string>

#include "net/asio_ssl.hpp"

namespace carrier::net {

// A TCP socket, or TLS over it once use_tls() was called (before any I/O): what a server
// connection (net::Connection) and a client (client/, federation links) read and write, so
// the same read and write code serves both. One branch per operation, no virtual call: the
// plain path stays the socket's own.
// Runs on: its owner's thread, only.
class SocketStream {
 public:
  explicit SocketStream(tcp::socket socket) : socket_(std::move(socket)) {}
  // A socket not yet connected (a client's).
  explicit SocketStream(asio::io_context& io) : socket_(io) {}

  // TLS from now on, over `context` (held as long as the stream: a reload does not touch it).
  void use_tls(std::shared_ptr<ssl::context> context) {
    context_ = std::move(context);
    tls_ = std::make_unique<ssl::stream<tcp::socket&>>(socket_, *context_);
  }
  // The client side of the same: the server's certificate must name `server_name` (a host name
  // or an IP address), which also goes out as SNI.
  void use_tls_client(std::shared_ptr<ssl::context> context, const std::string& server_name) {
    use_tls(std::move(context));
    SSL* ssl = tls_->native_handle();
    SSL_set_tlsext_host_name(ssl, server_name.c_str());
    // OpenSSL's own name check (not a verify callback), so a mismatch is reported as
    // "hostname mismatch" rather than an unspecified verification error.
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    boost::system::error_code not_ip;
    asio::ip::make_address(server_name, not_ip);
    if (!not_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str());
    } else {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), server_name.size());
    }
  }
  bool is_tls() const { return tls_ != nullptr; }
  // Client side: the TLS handshake (nothing to do on plain TCP). Empty when it succeeded, else
  // why it failed (tls_failure()).
  asio::awaitable<std::string> handshake_as_client() {
    if (!tls_) co_return std::string();
    boost::system::error_code ec;
    co_await tls_->async_handshake(ssl::stream_base::client, asio::redirect_error(asio::use_awaitable, ec));
    co_return ec ? tls_failure(ec) : std::string();
  }
  // Why a TLS handshake failed: OpenSSL's reason and, when the peer's certificate was refused,
  // the verification's ("certificate has expired", "hostname mismatch").
  std::string tls_failure(const boost::system::error_code& ec) const {
    std::string reason = ec.message();
    if (tls_) {
      const long verify = SSL_get_verify_result(tls_->native_handle());
      if (verify != X509_V_OK) reason += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
    }
    return reason;
  }
  // The TLS session (null on plain TCP): peer certificate, host name checks.
  ssl::stream<tcp::socket&>* tls() { return tls_.get(); }

  tcp::socket& socket() { return socket_; }
  const tcp::socket& socket() const { return socket_; }

  template <class Token>
  auto async_read_some(asio::mutable_buffer buffer, Token&& token) {
    if (tls_) return tls_->async_read_some(buffer, std::forward<Token>(token));
    return socket_.async_read_some(buffer, std::forward<Token>(token));
  }
  template <class Token>
  auto async_write(asio::const_buffer buffer, Token&& token) {
    if (tls_) return asio::async_write(*tls_, buffer, std::forward<Token>(token));
    return asio::async_write(socket_, buffer, std::forward<Token>(token));
  }

  // Closes the socket (no TLS close_notify: the peer sees the connection end).
  void close() {
    boost::system::error_code ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

 private:
  tcp::socket socket_;
  std::shared_ptr<ssl::context> context_;
  std::unique_ptr<ssl::stream<tcp::socket&>> tls_;
};

}  // namespace carrier::net
