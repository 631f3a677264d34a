#include "net/listener.hpp"

#include <fmt/format.h>

#include "base/logging.hpp"

namespace carrier::net {

Listener::Listener(ShardPool& pool, std::string protocol, AcceptHandler on_accept)
    : pool_(pool),
      protocol_(std::move(protocol)),
      on_accept_(std::move(on_accept)),
      acceptor_(pool.context(core::ShardId(0))) {}

Status Listener::open(const ListenerOptions& options) {
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options.host == "localhost" ? "127.0.0.1" : options.host, ec);
  if (ec) return unexpected(Errc::invalid_argument, fmt::format("{}: bad address '{}'", protocol_, options.host));
  tcp::endpoint endpoint(address, options.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return unexpected(Errc::io_error,
                      fmt::format("{}: cannot listen on {}:{}: {}", protocol_, options.host, options.port, ec.message()));
  }
  return ok();
}

tcp::endpoint Listener::local_endpoint() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void Listener::start() {
  asio::co_spawn(acceptor_.get_executor(), accept_loop(this), [proto = protocol_](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      logging::get("net")->error("{} listener stopped: {}", proto, ex.what());
    }
  });
}

void Listener::stop() {
  // Close on the acceptor's own shard: the accept loop runs there.
  asio::post(acceptor_.get_executor(), [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
}

asio::awaitable<void> Listener::accept_loop(Listener* self) {
  auto log = logging::get("net");
  for (;;) {
    const core::ShardId shard(static_cast<std::uint32_t>(self->next_shard_++ % self->pool_.shard_count()));
    boost::system::error_code ec;
    tcp::socket socket = co_await self->acceptor_.async_accept(self->pool_.context(shard),
                                                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) co_return;
      // Out of descriptors and the like: say so and keep accepting.
      log->warn("{} accept failed: {}", self->protocol_, ec.message());
      continue;
    }
    socket.set_option(tcp::no_delay(true), ec);
    self->pool_.post(shard, [self, shard, s = std::make_shared<tcp::socket>(std::move(socket))]() mutable {
      self->on_accept_(std::move(*s), shard);
    });
  }
}

}  // namespace carrier::net
