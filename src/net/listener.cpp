#include "net/listener.hpp"

#include <fmt/format.h>

#include "base/logging.hpp"

namespace carrier::net {

Listener::Listener(ShardPool& pool, std::string protocol, AcceptHandler on_accept, SourceLimiter* sources)
    : pool_(pool),
      protocol_(std::move(protocol)),
      on_accept_(std::move(on_accept)),
      sources_(sources),
      acceptor_(pool.context(model::ShardId(0))),
      backoff_timer_(pool.context(model::ShardId(0))) {}

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
    backoff_timer_.cancel();
  });
}

Admission Listener::admit(const tcp::socket& socket) {
  if (sources_ == nullptr) return {};
  boost::system::error_code ec;
  const auto remote = socket.remote_endpoint(ec);
  if (ec) return {};  // gone already: its session sees the close
  auto address = remote.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  const auto source = address.to_string();
  const auto now = SourceLimiter::Clock::now();
  const bool exempt = sources_->limits().exempt_loopback && address.is_loopback();
  auto admission = sources_->admit(exempt ? std::string_view() : std::string_view(source), now);
  if (const auto& why = admission.refusal()) {
    count_refusal(*why);
    // A flood must not flood the log: one line per 5 s per listener, with the count since.
    ++refusals_unlogged_;
    if (now - last_refusal_log_ >= std::chrono::seconds(5)) {
      logging::get("net")->warn("{} refused a connection from {}: {} limit ({} refusal(s) since last logged)",
                                protocol_, source, to_string(*why), refusals_unlogged_);
      last_refusal_log_ = now;
      refusals_unlogged_ = 0;
    }
  }
  return admission;
}

asio::awaitable<void> Listener::accept_loop(Listener* self) {
  auto log = logging::get("net");
  for (;;) {
    const model::ShardId shard(static_cast<std::uint32_t>(self->next_shard_++ % self->pool_.shard_count()));
    boost::system::error_code ec;
    tcp::socket socket = co_await self->acceptor_.async_accept(self->pool_.context(shard),
                                                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) co_return;
      // A peer that gave up while queued costs nothing: accept the next one at once.
      if (ec == asio::error::connection_aborted) continue;
      // Out of descriptors and the like: the connection stays queued, so retrying now would spin.
      const auto delay = self->backoff_.fail(AcceptBackoff::Clock::now());
      if (self->backoff_.should_log()) {
        log->warn("{} accept failed ({} time(s) since last logged): {}; retrying with back-off up to {} ms",
                  self->protocol_, self->backoff_.failures_to_log(), ec.message(), AcceptBackoff::max.count());
      }
      self->backoff_timer_.expires_after(delay);
      co_await self->backoff_timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (!self->acceptor_.is_open()) co_return;
      continue;
    }
    if (const auto failures = self->backoff_.succeed(); failures > 0) {
      log->info("{} accepting again after {} failed accept(s)", self->protocol_, failures);
    }
    socket.set_option(tcp::no_delay(true), ec);
    auto admission = std::make_shared<Admission>(self->admit(socket));
    self->pool_.post(shard, [self, shard, s = std::make_shared<tcp::socket>(std::move(socket)), admission]() mutable {
      self->on_accept_(std::move(*s), shard, std::move(*admission));
    });
  }
}

}  // namespace carrier::net
