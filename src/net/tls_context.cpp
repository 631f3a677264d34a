#include "net/tls_context.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

namespace carrier::net {

namespace {

// TLS 1.2's suites with forward secrecy and authenticated encryption only (Mozilla's
// "intermediate" list without DHE); TLS 1.3's defaults are all of that kind already.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

Unexpected tls_error(std::string_view what, const std::string& file, const boost::system::error_code& ec) {
  return unexpected(Errc::invalid_argument, fmt::format("TLS {} '{}': {}", what, file, ec.message()));
}

// What servers and clients share: protocol versions, ciphers, no compression or renegotiation.
Result<std::shared_ptr<ssl::context>> modern_context(ssl::context::method method) {
  auto context = std::make_shared<ssl::context>(method);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_compression | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  SSL_CTX* native = context->native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
    return unexpected(Errc::invalid_argument, "TLS: OpenSSL knows none of the configured ciphers");
  }
  return context;
}

// The certificate chain and key, checked to belong together.
Status load_identity(ssl::context& context, const std::string& cert_file, const std::string& key_file) {
  boost::system::error_code ec;
  context.use_certificate_chain_file(cert_file, ec);
  if (ec) return tls_error("certificate", cert_file, ec);
  context.use_private_key_file(key_file, ssl::context::pem, ec);
  if (ec) return tls_error("key", key_file, ec);
  if (SSL_CTX_check_private_key(context.native_handle()) != 1) {
    return unexpected(Errc::invalid_argument,
                      fmt::format("TLS key '{}' does not match the certificate '{}'", key_file, cert_file));
  }
  return ok();
}

}  // namespace

Result<std::shared_ptr<ssl::context>> make_server_context(const TlsOptions& options) {
  if (options.cert_file.empty() || options.key_file.empty()) {
    return unexpected(Errc::invalid_argument, "TLS needs tls.cert_file and tls.key_file");
  }
  if (options.client_certificates != ClientCertificates::none && options.ca_file.empty()) {
    return unexpected(Errc::invalid_argument, "tls.client_certificates needs tls.ca_file (the CAs clients chain to)");
  }
  auto context = modern_context(ssl::context::tls_server);
  if (!context) return context;
  if (auto st = load_identity(**context, options.cert_file, options.key_file); !st) return unexpected(st.error());
  // No TLS 1.3 session tickets: they arrive unasked right after the handshake, and a client
  // that reads on one thread while it writes CONNECT on another (python3-stomp) can lose that
  // CONNECT to OpenSSL's non-thread-safe SSL object. The clients Carrier serves do not resume.
  SSL_CTX_set_num_tickets((*context)->native_handle(), 0);
  boost::system::error_code ec;
  if (!options.ca_file.empty()) {
    (*context)->load_verify_file(options.ca_file, ec);
    if (ec) return tls_error("CA file", options.ca_file, ec);
    // The CAs a client may pick its certificate by.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(options.ca_file.c_str()); names != nullptr) {
      SSL_CTX_set_client_CA_list((*context)->native_handle(), names);
    }
  }
  switch (options.client_certificates) {
    case ClientCertificates::none: (*context)->set_verify_mode(ssl::verify_none); break;
    case ClientCertificates::optional: (*context)->set_verify_mode(ssl::verify_peer); break;
    case ClientCertificates::required:
      (*context)->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      break;
  }
  return context;
}

Result<std::shared_ptr<ssl::context>> make_client_context(const TlsClientOptions& options) {
  auto context = modern_context(ssl::context::tls_client);
  if (!context) return context;
  boost::system::error_code ec;
  if (options.ca_file.empty()) {
    (*context)->set_default_verify_paths(ec);
    if (ec) return tls_error("CA paths", "(system default)", ec);
  } else {
    (*context)->load_verify_file(options.ca_file, ec);
    if (ec) return tls_error("CA file", options.ca_file, ec);
  }
  (*context)->set_verify_mode(ssl::verify_peer);
  if (!options.cert_file.empty() || !options.key_file.empty()) {
    if (options.cert_file.empty() || options.key_file.empty()) {
      return unexpected(Errc::invalid_argument, "a TLS client certificate needs both --cert and --key");
    }
    if (auto st = load_identity(**context, options.cert_file, options.key_file); !st) return unexpected(st.error());
  }
  return context;
}

Status use_client_tls(SocketStream& stream, const TlsClientOptions& options, std::string_view host) {
  if (!options.enabled) return ok();
  auto context = make_client_context(options);
  if (!context) return unexpected(context.error());
  stream.use_tls_client(std::move(*context), options.server_name.empty() ? std::string(host) : options.server_name);
  return ok();
}

std::string certificate_identity(SSL* ssl) {
  std::unique_ptr<X509, decltype(&X509_free)> cert(SSL_get1_peer_certificate(ssl), &X509_free);
  if (!cert || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  if (X509_NAME* subject = X509_get_subject_name(cert.get()); subject != nullptr) {
    const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index >= 0) {
      ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
      unsigned char* utf8 = nullptr;
      const int length = ASN1_STRING_to_UTF8(&utf8, data);
      if (length > 0) {
        std::string cn(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
        OPENSSL_free(utf8);
        return cn;
      }
      OPENSSL_free(utf8);
    }
  }
  auto* names = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  std::string first;
  for (int i = 0; names != nullptr && i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type == GEN_DNS || name->type == GEN_EMAIL || name->type == GEN_URI) {
      const ASN1_IA5STRING* text = name->d.ia5;
      first.assign(reinterpret_cast<const char*>(ASN1_STRING_get0_data(text)),
                   static_cast<std::size_t>(ASN1_STRING_length(text)));
      break;
    }
  }
  GENERAL_NAMES_free(names);
  return first;
}

Result<std::shared_ptr<TlsServer>> TlsServer::create(TlsOptions options) {
  std::shared_ptr<TlsServer> server(new TlsServer(std::move(options)));
  if (auto st = server->reload(); !st) return unexpected(st.error());
  return server;
}

TlsAccept TlsServer::accept() const {
  std::lock_guard lock(mutex_);
  return TlsAccept{current_, options_.use_identity_as_username};
}

Status TlsServer::reload() {
  auto context = make_server_context(options_);
  if (!context) return unexpected(context.error());
  std::lock_guard lock(mutex_);
  current_ = std::move(*context);
  return ok();
}

}  // namespace carrier::net
