#pragma once

#include <string>
#include <string_view>

namespace carrier::cli {

// Where `carrier admin` and `carrier top` find the admin API, and as whom.
struct AdminServer {
  std::string server = "127.0.0.1:8080";  // the broker's HTTP listener
  std::string user;                       // an admin user; password from $CARRIER_PASSWORD
};

struct AdminAnswer {
  int status = 0;
  std::string body;
};

// One HTTP/1.1 request (`method` "GET", "POST", "DELETE") to `target` ("/admin/v1/overview"),
// on a connection of its own; a non-empty `json_body` is sent as application/json. Throws
// std::exception when the broker cannot be reached.
AdminAnswer admin_call(const AdminServer& server, std::string_view method, const std::string& target,
                       std::string json_body = {});

// "a b" -> "a%20b": a query value or path segment.
std::string url_encode(std::string_view text);

}  // namespace carrier::cli
