#pragma once

// The only place Carrier includes Boost.Asio. g++ 12 with Boost 1.74 needs <utility> before any
// Asio header (std::exchange in awaitable code), and clang 14 needs the coroutine macros to accept
// boost::asio::awaitable.
#include <utility>

#if defined(__clang__) && !defined(BOOST_ASIO_HAS_CO_AWAIT)
#define BOOST_ASIO_HAS_CO_AWAIT 1
#define BOOST_ASIO_HAS_STD_COROUTINE 1
#endif

#include <boost/asio.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace carrier::net {
namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
}  // namespace carrier::net
