#include "net/connection.hpp"

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <atomic>
#include <memory>

#include <fmt/format.h>

#include "base/logging.hpp"

namespace carrier::net {

namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
// A read smaller than this that leaves no partial frame means the peer is idle or trickling:
// the buffer goes back to the allocator and the next read waits without one, so 10,000 idle
// connections do not pin 64 KiB each. A busy connection reads more per call and keeps it.
constexpr std::size_t kKeepBufferAbove = 2 * 1024;

// One per shard thread, allocated on first use and left uninitialised: only the pages a read
// writes become resident.
asio::mutable_buffer read_scratch() {
  thread_local std::unique_ptr<char[]> scratch(new char[kReadChunk]);
  return asio::buffer(scratch.get(), kReadChunk);
}

// After many connections of a shard closed (a storm of clients leaving), the allocator keeps
// the memory they freed: glibc returns only the top of each heap by itself. When the shard's
// count has halved from its peak, by at least kTrimAfterClosing, the free pages are handed back
// a moment later (once the closed connections' objects are gone too). malloc_trim walks every
// heap: a few ms, a few times per storm, never per message.
constexpr std::size_t kTrimAfterClosing = 1000;
thread_local std::size_t t_peak_connections = 0;
thread_local bool t_trim_scheduled = false;

void note_open_connections(const asio::any_io_executor& executor, std::size_t open_now) {
  if (open_now > t_peak_connections) {
    t_peak_connections = open_now;
    return;
  }
  if (t_trim_scheduled || t_peak_connections - open_now < kTrimAfterClosing || open_now > t_peak_connections / 2) {
    return;
  }
  t_trim_scheduled = true;
  auto timer = std::make_shared<asio::steady_timer>(executor, std::chrono::milliseconds(100));
  timer->async_wait([timer](const boost::system::error_code&) {
#ifdef __GLIBC__
    ::malloc_trim(0);
#endif
    t_trim_scheduled = false;
    t_peak_connections = Connection::on_this_shard().size();
  });
}

std::atomic<std::uint64_t> g_tls_completed{0};
std::atomic<std::uint64_t> g_tls_failed{0};
std::atomic<std::uint64_t> g_tls_abandoned{0};

// A peer that misbehaves is worth a warning, a flood of them only one every few seconds.
bool tls_warning_due() {
  thread_local std::chrono::steady_clock::time_point last;
  const auto now = std::chrono::steady_clock::now();
  if (now - last < std::chrono::seconds(5)) return false;
  last = now;
  return true;
}

// TLS records are at most 16 KiB: a larger read buffer gains nothing.
constexpr std::size_t kTlsReadChunk = 16 * 1024;

void log_exception(const std::string& prefix, std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    logging::get("net")->error("{} connection handler failed: {}", prefix, ex.what());
  }
}

std::string peer_of(const tcp::socket& socket) {
  boost::system::error_code ec;
  auto remote = socket.remote_endpoint(ec);
  return ec ? std::string("?") : fmt::format("{}:{}", remote.address().to_string(), remote.port());
}

}  // namespace

Connection::Connection(tcp::socket socket, model::ShardId shard, std::string protocol, TlsAccept tls)
    : Transport(socket.get_executor(), shard, std::move(protocol), peer_of(socket)),
      stream_(std::move(socket)),
      identity_as_username_(tls.identity_as_username),
      wake_(stream_.socket().get_executor()),
      resume_(stream_.socket().get_executor()) {
  wake_.expires_at(asio::steady_timer::time_point::max());
  if (tls.context && tls.as_client) {
    as_client_ = true;
    stream_.use_tls_client(std::move(tls.context), tls.server_name);
  } else if (tls.context) {
    stream_.use_tls(std::move(tls.context));
  }
}

Connection::TlsHandshakeCounts Connection::tls_handshakes() {
  return {g_tls_completed.load(std::memory_order_relaxed), g_tls_failed.load(std::memory_order_relaxed),
          g_tls_abandoned.load(std::memory_order_relaxed)};
}

Connection::~Connection() = default;

void Connection::start(std::shared_ptr<TransportHandler> session) {
  session_ = std::move(session);
  set_handler(session_.get());
  register_on_shard();
  note_open_connections(executor(), on_this_shard().size());
  // The quiet read path may read synchronously: that must never block.
  boost::system::error_code ec;
  stream_.socket().non_blocking(true, ec);
  if (stream_.is_tls()) {
    handshaking_ = true;
    loops_running_ = 1;
    auto self = shared_from_this();
    asio::co_spawn(executor(), handshake(self), [self](std::exception_ptr e) { self->loop_ended(e); });
    return;
  }
  start_loops();
}

void Connection::start_loops() {
  auto self = shared_from_this();
  loops_running_ += 2;
  asio::co_spawn(executor(), read_loop(self), [self](std::exception_ptr e) { self->loop_ended(e); });
  asio::co_spawn(executor(), write_loop(self), [self](std::exception_ptr e) { self->loop_ended(e); });
}

asio::awaitable<void> Connection::handshake(std::shared_ptr<Connection> self) {
  boost::system::error_code ec;
  const auto side = self->as_client_ ? ssl::stream_base::client : ssl::stream_base::server;
  co_await self->stream_.tls()->async_handshake(side, asio::redirect_error(asio::use_awaitable, ec));
  if (self->is_closed()) co_return;  // counted as abandoned by close_io()
  self->handshaking_ = false;
  if (ec) {
    const auto failed = g_tls_failed.fetch_add(1, std::memory_order_relaxed) + 1;
    // This side dialled (a federation link): few, retried with back-off, each failure logged.
    if (self->as_client_ || tls_warning_due()) {
      std::string why = self->stream_.tls_failure(ec);
      // A dialler's most likely mistake: the far listener is plain (it answered no TLS, or closed).
      if (self->as_client_ && (ec == ssl::error::stream_truncated || ec.message() == "wrong version number")) {
        why += " (does the far listener speak TLS?)";
      }
      logging::get("net")->warn("{} TLS handshake failed ({} so far): {}", self->log_prefix(), failed, why);
    }
    self->close();
    co_return;
  }
  g_tls_completed.fetch_add(1, std::memory_order_relaxed);
  if (self->identity_as_username_) self->set_peer_identity(certificate_identity(self->stream_.tls()->native_handle()));
  if (self->is_closing()) {
    self->close();
    co_return;
  }
  self->start_loops();
}

void Connection::loop_ended(std::exception_ptr e) {
  log_exception(log_prefix(), e);
  if (e) close();
  // Both loops are done (so closed): nothing calls the session any more. It goes now unless
  // someone else (a timer's coroutine, a pending completion) still holds it.
  if (--loops_running_ == 0) session_.reset();
}

void Connection::wake_writer() {
  // No writer before the TLS handshake is done: output waits for it, but closing cannot (the
  // session gave up on the client), so it closes now, once the session's call has returned.
  if (handshaking_ && is_closing() && !is_closed()) {
    asio::post(executor(), [self = shared_from_this()] { self->close(); });
    return;
  }
  wake_.cancel();
}

void Connection::wake_reader() { resume_.cancel(); }

void Connection::first_bytes() {
  heard_ = true;
  // A TLS record (handshake, version 3.x) where the protocol's own bytes belong: a client
  // configured for the TLS port. The session refuses it in its own words; this says why.
  if (!stream_.is_tls() && read_buffer_.size() >= 2 && read_buffer_[0] == 0x16 && read_buffer_[1] == 0x03 &&
      tls_warning_due()) {
    logging::get("net")->warn("{} a TLS handshake on a plain port: the client should use the TLS listener",
                              log_prefix());
  }
}

void Connection::close_after_flush(std::chrono::milliseconds grace) {
  close_after_flush();
  if (is_closed() || linger_) return;
  linger_ = std::make_unique<asio::steady_timer>(executor(), grace);
  linger_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->close();
  });
}

void Connection::close_io() {
  if (linger_) linger_->cancel();
  if (handshaking_) {
    handshaking_ = false;
    const auto abandoned = g_tls_abandoned.fetch_add(1, std::memory_order_relaxed) + 1;
    if (tls_warning_due()) {
      logging::get("net")->warn("{} closed before its TLS handshake completed ({} so far)", log_prefix(), abandoned);
    }
  }
  stream_.close();
  wake_.cancel();
  resume_.cancel();
  note_open_connections(executor(), on_this_shard().size());
}

asio::awaitable<void> Connection::read_loop(std::shared_ptr<Connection> self) {
  // Quiet: the last read was small and left nothing over, so the connection holds no read
  // buffer; the next read goes to peek_ (and what follows it through the shard's scratch
  // buffer), keeping only the bytes that came. Busy: it reads straight into its own buffer.
  bool quiet = !self->stream_.is_tls();  // TLS: its records are read whole anyway
  const std::size_t chunk = self->stream_.is_tls() ? kTlsReadChunk : kReadChunk;
  for (;;) {
    if (self->is_closing()) co_return;
    if (self->is_paused()) {
      boost::system::error_code ec;
      self->resume_.expires_at(asio::steady_timer::time_point::max());
      co_await self->resume_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (self->is_closing()) co_return;
      if (self->is_paused()) continue;
      self->deliver_input(self->read_buffer_);
      // What came while paused (a SUBSCRIBE pipelined behind its CONNECT, say) may have been
      // the last for a while: an idle connection must not wait holding a busy-sized buffer.
      quiet = self->settle_read_buffer(0);
      continue;
    }
    boost::system::error_code ec;
    std::size_t n = 0;
    if (quiet && self->read_buffer_.empty()) {
      // Wait on the connection's few inline bytes: no buffer is held while idle, and (unlike
      // async_wait) the read stays Asio's usual speculative one, with no epoll re-arm.
      n = co_await self->stream_.socket().async_read_some(asio::buffer(self->peek_),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      if (!ec) {
        self->read_buffer_.assign(self->peek_.data(), n);
        if (n == self->peek_.size()) {
          // More may be waiting: take it now through the shard's scratch buffer. Synchronous
          // and non-blocking, so nothing else on this shard touches the scratch meanwhile.
          const asio::mutable_buffer scratch = read_scratch();
          boost::system::error_code more_ec;
          const std::size_t more = self->stream_.socket().read_some(scratch, more_ec);
          // would_block: that was all; EOF or an error: the next read reports it.
          if (!more_ec) {
            self->read_buffer_.append(static_cast<const char*>(scratch.data()), more);
            n += more;
          }
        }
      }
    } else {
      const auto old_size = self->read_buffer_.size();
      self->read_buffer_.resize(old_size + chunk);
      n = co_await self->stream_.async_read_some(asio::buffer(self->read_buffer_.data() + old_size, chunk),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      self->read_buffer_.resize(old_size + n);
    }
    if (ec) {
      // TLS 1.3: a server refusing the client's certificate says so only after the client's
      // side of the handshake is done, in an alert that arrives here.
      if (self->as_client_ && !self->heard_ && ec.category() == asio::error::get_ssl_category()) {
        logging::get("net")->warn("{} TLS handshake failed (refused by the far side): {}", self->log_prefix(),
                                  ec.message());
        self->close();
        co_return;
      }
      // EOF, reset, or our own close: not exceptional.
      if (ec != asio::error::eof && ec != asio::error::operation_aborted && ec != asio::error::connection_reset) {
        logging::get("net")->debug("{} read failed: {}", self->log_prefix(), ec.message());
      }
      self->close();
      co_return;
    }
    self->note_read();
    if (self->is_closing()) co_return;
    if (!self->heard_) self->first_bytes();
    self->deliver_input(self->read_buffer_);
    quiet = self->settle_read_buffer(n);
  }
}

bool Connection::settle_read_buffer(std::size_t last_read) {
  // Nothing left over: give the buffer back if the connection went quiet (a small read) or
  // the buffer grew large for one big frame.
  if (!read_buffer_.empty()) return false;
  if (last_read < kKeepBufferAbove || read_buffer_.capacity() > 4 * kReadChunk) std::string().swap(read_buffer_);
  return last_read < kKeepBufferAbove && !stream_.is_tls();
}

asio::awaitable<void> Connection::write_loop(std::shared_ptr<Connection> self) {
  for (;;) {
    if (self->is_closed()) co_return;
    if (!self->take_output()) {
      if (self->is_closing()) {
        self->close();
        co_return;
      }
      boost::system::error_code ec;
      self->wake_.expires_at(asio::steady_timer::time_point::max());
      co_await self->wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    boost::system::error_code ec;
    co_await self->stream_.async_write(asio::buffer(self->writing()), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      self->close();
      co_return;
    }
    self->output_written();
  }
}

}  // namespace carrier::net
