#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "base/result.hpp"
#include "net/asio_ssl.hpp"
#include "net/options.hpp"
#include "net/socket_stream.hpp"

namespace carrier::net {

// What a connection accepted on a TLS listener runs with: the context current when it was
// accepted (a reload does not touch it) and whether its client certificate names the user.
// A connection this side dialled (a federation link) runs the client's handshake instead, and
// the server's certificate must name `server_name`.
struct TlsAccept {
  std::shared_ptr<ssl::context> context;
  bool identity_as_username = false;
  bool as_client = false;
  std::string server_name;  // as_client: the name the server's certificate must carry
};

// Builds a server context from the files: TLS 1.2 and 1.3 only; for 1.2 only ECDHE key exchange
// with AEAD ciphers (no RSA key exchange, no CBC); client certificates as `options` asks. An
// error names the file and OpenSSL's reason.
Result<std::shared_ptr<ssl::context>> make_server_context(const TlsOptions& options);
// The client side of the same: verifies the server's certificate against `ca_file` (or the
// system's CAs) and presents a client certificate when one is given.
Result<std::shared_ptr<ssl::context>> make_client_context(const TlsClientOptions& options);

// A client's stream speaks TLS as `options` says (untouched when not enabled): the server's
// certificate must chain to options.ca_file and name options.server_name, or else `host`.
Status use_client_tls(SocketStream& stream, const TlsClientOptions& options, std::string_view host);

// The user a verified client certificate names: its subject CN, else its first subjectAltName
// (DNS, email or URI); empty when there is no certificate or neither.
std::string certificate_identity(SSL* ssl);

// One TLS listener's context, rebuilt from its files on reload (SIGHUP): connections accepted
// afterwards use the new certificate, those already open keep theirs. A reload that fails
// (a missing file, a key that does not match) keeps the old context.
// Runs on: created and reloaded by the main thread; accept() on any shard. Its mutex guards
// only the pointer swap (docs/threading.md).
class TlsServer {
 public:
  static Result<std::shared_ptr<TlsServer>> create(TlsOptions options);

  TlsAccept accept() const;
  Status reload();
  const TlsOptions& options() const { return options_; }

 private:
  explicit TlsServer(TlsOptions options) : options_(std::move(options)) {}

  const TlsOptions options_;
  mutable std::mutex mutex_;
  std::shared_ptr<ssl::context> current_;  // guarded by mutex_
};

}  // namespace carrier::net
