#include "cli/admin_client.hpp"

#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include "net/asio.hpp"  // before Beast: it includes Asio

#include <boost/beast/core/detail/base64.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

namespace carrier::cli {

namespace bhttp = boost::beast::http;

std::string url_encode(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

AdminAnswer admin_call(const AdminServer& server, std::string_view method, const std::string& target,
                       std::string json_body) {
  const auto colon = server.server.rfind(':');
  if (colon == std::string::npos) throw std::runtime_error("--server must be HOST:PORT");
  const std::string host = server.server.substr(0, colon);
  const std::string port = server.server.substr(colon + 1);
  net::asio::io_context io;
  net::tcp::resolver resolver(io);
  net::tcp::socket socket(io);
  net::asio::connect(socket, resolver.resolve(host, port));
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(boost::beast::string_view(method.data(), method.size())), target, 11);
  req.set(bhttp::field::host, host);
  req.set(bhttp::field::user_agent, "carrier-admin");
  if (!server.user.empty()) {
    const char* password = std::getenv("CARRIER_PASSWORD");
    const std::string plain = server.user + ":" + (password != nullptr ? password : "");
    std::string encoded(boost::beast::detail::base64::encoded_size(plain.size()), '\0');
    encoded.resize(boost::beast::detail::base64::encode(encoded.data(), plain.data(), plain.size()));
    req.set(bhttp::field::authorization, "Basic " + encoded);
  }
  if (!json_body.empty()) req.set(bhttp::field::content_type, "application/json");
  req.body() = std::move(json_body);
  req.prepare_payload();
  bhttp::write(socket, req);
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(socket, buffer, res);
  boost::system::error_code ignored;
  socket.shutdown(net::tcp::socket::shutdown_both, ignored);
  return AdminAnswer{static_cast<int>(res.result_int()), std::move(res.body())};
}

}  // namespace carrier::cli
