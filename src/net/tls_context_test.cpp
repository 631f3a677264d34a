#include "net/tls_context.hpp"

#include "net/socket_stream.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

namespace carrier::net {
namespace {

namespace fs = std::filesystem;

// A self-signed EC certificate for `cn` and its key, written as PEM files in a temp directory.
struct CertFiles {
  std::string cert;
  std::string key;
};

void write_pem(const std::string& path, X509* cert, EVP_PKEY* key) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "w"), &std::fclose);
  ASSERT_TRUE(file);
  if (cert != nullptr) {
    ASSERT_EQ(PEM_write_X509(file.get(), cert), 1);
  }
  if (key != nullptr) {
    ASSERT_EQ(PEM_write_PrivateKey(file.get(), key, nullptr, nullptr, 0, nullptr, nullptr), 1);
  }
}

class TlsContextTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("carrier-tls-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  CertFiles make_cert(const std::string& name, const std::string& cn) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), &EVP_PKEY_free);
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), &X509_free);
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* subject = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                               -1, 0);
    X509_set_issuer_name(cert.get(), subject);
    X509_sign(cert.get(), key.get(), EVP_sha256());
    CertFiles files{(dir_ / (name + ".crt")).string(), (dir_ / (name + ".key")).string()};
    write_pem(files.cert, cert.get(), nullptr);
    write_pem(files.key, nullptr, key.get());
    return files;
  }

  fs::path dir_;
};

TEST_F(TlsContextTest, ServerContextIsTls12OrLaterWithAeadCiphersOnly) {
  const auto files = make_cert("server", "localhost");
  auto context = make_server_context(TlsOptions{files.cert, files.key});
  ASSERT_TRUE(context) << context.error().detail;
  SSL_CTX* native = (*context)->native_handle();
  EXPECT_EQ(SSL_CTX_get_min_proto_version(native), TLS1_2_VERSION);
  std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(native), &SSL_free);
  STACK_OF(SSL_CIPHER)* ciphers = SSL_get_ciphers(ssl.get());
  ASSERT_GT(sk_SSL_CIPHER_num(ciphers), 0);
  for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
    const SSL_CIPHER* cipher = sk_SSL_CIPHER_value(ciphers, i);
    const std::string name = SSL_CIPHER_get_name(cipher);
    EXPECT_TRUE(SSL_CIPHER_is_aead(cipher)) << name;
    // TLS 1.3 suites have no key exchange of their own; every 1.2 one is ECDHE.
    if (SSL_CIPHER_get_kx_nid(cipher) != NID_kx_any) {
      EXPECT_EQ(SSL_CIPHER_get_kx_nid(cipher), NID_kx_ecdhe) << name;
    }
  }
  EXPECT_EQ(SSL_CTX_get_verify_mode(native), SSL_VERIFY_NONE);
  EXPECT_EQ(SSL_CTX_get_num_tickets(native), 0u);  // no unasked TLS 1.3 tickets (tls_context.cpp)
}

TEST_F(TlsContextTest, ClientCertificateModesSetTheVerifyMode) {
  const auto files = make_cert("server", "localhost");
  const auto ca = make_cert("ca", "test CA");
  TlsOptions options{files.cert, files.key, ca.cert, ClientCertificates::optional};
  auto optional = make_server_context(options);
  ASSERT_TRUE(optional) << optional.error().detail;
  EXPECT_EQ(SSL_CTX_get_verify_mode((*optional)->native_handle()), SSL_VERIFY_PEER);
  options.client_certificates = ClientCertificates::required;
  auto required = make_server_context(options);
  ASSERT_TRUE(required) << required.error().detail;
  EXPECT_EQ(SSL_CTX_get_verify_mode((*required)->native_handle()), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT);
  options.ca_file.clear();
  auto without_ca = make_server_context(options);
  ASSERT_FALSE(without_ca);
  EXPECT_NE(without_ca.error().detail.find("ca_file"), std::string::npos);
}

TEST_F(TlsContextTest, ErrorsNameTheFile) {
  const auto files = make_cert("server", "localhost");
  const auto other = make_cert("other", "localhost");
  auto missing = make_server_context(TlsOptions{(dir_ / "nope.crt").string(), files.key});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().detail.find("nope.crt"), std::string::npos) << missing.error().detail;
  auto mismatch = make_server_context(TlsOptions{files.cert, other.key});
  ASSERT_FALSE(mismatch);
  EXPECT_NE(mismatch.error().detail.find("other.key"), std::string::npos) << mismatch.error().detail;
  auto no_key = make_server_context(TlsOptions{files.cert, ""});
  ASSERT_FALSE(no_key);
  auto client_half = make_client_context(TlsClientOptions{true, files.cert, files.cert, ""});
  ASSERT_FALSE(client_half);
  EXPECT_NE(client_half.error().detail.find("--key"), std::string::npos) << client_half.error().detail;
}

TEST_F(TlsContextTest, ReloadSwapsTheContextAndKeepsTheOldOneOnFailure) {
  const auto files = make_cert("server", "localhost");
  auto server = TlsServer::create(TlsOptions{files.cert, files.key});
  ASSERT_TRUE(server) << server.error().detail;
  const auto first = (*server)->accept().context;
  ASSERT_TRUE(first);
  // A new certificate and key in the same files: the next accept gets a new context.
  make_cert("server", "localhost");
  ASSERT_TRUE((*server)->reload());
  const auto second = (*server)->accept().context;
  EXPECT_NE(second, first);
  // A broken file: the reload fails and the context in use stays.
  fs::remove(files.key);
  EXPECT_FALSE((*server)->reload());
  EXPECT_EQ((*server)->accept().context, second);
}

TEST_F(TlsContextTest, ClientContextVerifiesThePeer) {
  const auto ca = make_cert("ca", "test CA");
  auto context = make_client_context(TlsClientOptions{true, ca.cert});
  ASSERT_TRUE(context) << context.error().detail;
  EXPECT_EQ(SSL_CTX_get_verify_mode((*context)->native_handle()), SSL_VERIFY_PEER);
  EXPECT_EQ(SSL_CTX_get_min_proto_version((*context)->native_handle()), TLS1_2_VERSION);
}

// A client handshake (SocketStream::use_tls_client) against a server with `server` over
// loopback; returns the client's failure text, empty when it succeeded.
std::string client_handshake(const CertFiles& server, const std::string& server_name) {
  asio::io_context io;
  auto server_context = make_server_context(TlsOptions{server.cert, server.key});
  auto client_context = make_client_context(TlsClientOptions{true, server.cert});
  EXPECT_TRUE(server_context && client_context);
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  tcp::socket accepted(io);
  std::unique_ptr<ssl::stream<tcp::socket&>> server_side;
  acceptor.async_accept(accepted, [&](const boost::system::error_code& ec) {
    if (ec) return;
    server_side = std::make_unique<ssl::stream<tcp::socket&>>(accepted, **server_context);
    server_side->async_handshake(ssl::stream_base::server, [](const boost::system::error_code&) {});
  });
  SocketStream client(io);
  client.socket().connect(acceptor.local_endpoint());
  client.use_tls_client(*client_context, server_name);
  std::string failure = "not run";
  asio::co_spawn(io, [&]() -> asio::awaitable<void> {
    failure = co_await client.handshake_as_client();
    client.close();
  }, asio::detached);
  io.run_for(std::chrono::seconds(10));
  return failure;
}

TEST_F(TlsContextTest, AClientChecksTheServersNameAndSaysWhenItDiffers) {
  const auto server = make_cert("server", "node-a.example");
  EXPECT_EQ(client_handshake(server, "node-a.example"), "");
  const auto wrong = client_handshake(server, "node-b.example");
  EXPECT_NE(wrong.find("hostname mismatch"), std::string::npos) << wrong;
  // An IP address is checked as one (the certificate names none).
  const auto ip = client_handshake(server, "127.0.0.1");
  EXPECT_NE(ip.find("IP address mismatch"), std::string::npos) << ip;
}

}  // namespace
}  // namespace carrier::net
