#pragma once

// Boost.Asio's TLS stream (OpenSSL) on top of net/asio.hpp. Apart from asio.hpp so that only
// the code doing TLS compiles against the OpenSSL headers.
#include "net/asio.hpp"

#include <boost/asio/ssl.hpp>

namespace carrier::net {
namespace ssl = boost::asio::ssl;
}  // namespace carrier::net
