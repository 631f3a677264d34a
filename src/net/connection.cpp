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

std::atomic<std::uint64_t> g_next_connection_id{1};
constexpr std::size_t kReadChunk = 64 * 1024;
// A read smaller than this that leaves no partial frame means the peer is idle or trickling:
// the buffer goes back to the allocator and the next read waits without one, so 10,000 idle
// connections do not pin 64 KiB each. A busy connection reads more per call and keeps it.
constexpr std::size_t kKeepBufferAbove = 2 * 1024;
// An output buffer grown by a burst is given back once writes are small again; below this
// capacity it is kept, so steady small writes reuse their two buffers without allocating.
constexpr std::size_t kKeepWriteCapacityBelow = 64 * 1024;
constexpr std::size_t kSmallWrite = 4 * 1024;

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

void log_exception(const std::string& prefix, std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    logging::get("net")->error("{} connection handler failed: {}", prefix, ex.what());
  }
}

}  // namespace

std::unordered_set<Connection*>& Connection::on_this_shard() {
  thread_local std::unordered_set<Connection*> connections;
  return connections;
}

Connection::Connection(tcp::socket socket, model::ShardId shard, std::string protocol)
    : socket_(std::move(socket)),
      shard_(shard),
      id_(g_next_connection_id.fetch_add(1, std::memory_order_relaxed)),
      protocol_(std::move(protocol)),
      wake_(socket_.get_executor()),
      resume_(socket_.get_executor()),
      last_read_(std::chrono::steady_clock::now()),
      last_write_(last_read_) {
  boost::system::error_code ec;
  auto remote = socket_.remote_endpoint(ec);
  peer_ = ec ? std::string("?") : fmt::format("{}:{}", remote.address().to_string(), remote.port());
  log_prefix_ = fmt::format("[{} c{} {}]", protocol_, id_, peer_);
  wake_.expires_at(asio::steady_timer::time_point::max());
}

Connection::~Connection() = default;

void Connection::start() {
  on_this_shard().insert(this);
  note_open_connections(socket_.get_executor(), on_this_shard().size());
  // The quiet read path may read synchronously: that must never block.
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  auto self = shared_from_this();
  asio::co_spawn(socket_.get_executor(), read_loop(self), [prefix = log_prefix_, self](std::exception_ptr e) {
    log_exception(prefix, e);
    if (e) self->close();
  });
  asio::co_spawn(socket_.get_executor(), write_loop(self), [prefix = log_prefix_, self](std::exception_ptr e) {
    log_exception(prefix, e);
    if (e) self->close();
  });
}

void Connection::flush() {
  if (!pending_.empty()) wake_.cancel();
}

void Connection::resume_reading() {
  if (!paused_) return;
  paused_ = false;
  // The peer could not be heard while we were not reading: its silence then does not count
  // against heart-beats or keep-alives.
  last_read_ = std::chrono::steady_clock::now();
  resume_.cancel();
}

void Connection::close_after_flush() {
  closing_ = true;
  wake_.cancel();
}

void Connection::close_after_flush(std::chrono::milliseconds grace) {
  close_after_flush();
  if (closed_ || linger_) return;
  linger_ = std::make_unique<asio::steady_timer>(socket_.get_executor(), grace);
  linger_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (!ec) self->close();
  });
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  closing_ = true;
  boost::system::error_code ec;
  if (linger_) linger_->cancel();
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  wake_.cancel();
  resume_.cancel();
  on_this_shard().erase(this);
  note_open_connections(socket_.get_executor(), on_this_shard().size());
  on_closed();
}

asio::awaitable<void> Connection::read_loop(std::shared_ptr<Connection> self) {
  // Quiet: the last read was small and left nothing over, so the connection holds no read
  // buffer; the next read goes to peek_ (and what follows it through the shard's scratch
  // buffer), keeping only the bytes that came. Busy: it reads straight into its own buffer.
  bool quiet = true;
  for (;;) {
    if (self->closing_) co_return;
    if (self->paused_) {
      boost::system::error_code ec;
      self->resume_.expires_at(asio::steady_timer::time_point::max());
      co_await self->resume_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      if (self->closing_) co_return;
      if (self->paused_) continue;
      self->on_data(self->read_buffer_);
      continue;
    }
    boost::system::error_code ec;
    std::size_t n = 0;
    if (quiet && self->read_buffer_.empty()) {
      // Wait on the connection's few inline bytes: no buffer is held while idle, and (unlike
      // async_wait) the read stays Asio's usual speculative one, with no epoll re-arm.
      n = co_await self->socket_.async_read_some(asio::buffer(self->peek_),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      if (!ec) {
        self->read_buffer_.assign(self->peek_.data(), n);
        if (n == self->peek_.size()) {
          // More may be waiting: take it now through the shard's scratch buffer. Synchronous
          // and non-blocking, so nothing else on this shard touches the scratch meanwhile.
          const asio::mutable_buffer scratch = read_scratch();
          boost::system::error_code more_ec;
          const std::size_t more = self->socket_.read_some(scratch, more_ec);
          // would_block: that was all; EOF or an error: the next read reports it.
          if (!more_ec) {
            self->read_buffer_.append(static_cast<const char*>(scratch.data()), more);
            n += more;
          }
        }
      }
    } else {
      const auto old_size = self->read_buffer_.size();
      self->read_buffer_.resize(old_size + kReadChunk);
      n = co_await self->socket_.async_read_some(asio::buffer(self->read_buffer_.data() + old_size, kReadChunk),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      self->read_buffer_.resize(old_size + n);
    }
    if (ec) {
      // EOF, reset, or our own close: not exceptional.
      if (ec != asio::error::eof && ec != asio::error::operation_aborted && ec != asio::error::connection_reset) {
        logging::get("net")->debug("{} read failed: {}", self->log_prefix_, ec.message());
      }
      self->close();
      co_return;
    }
    self->last_read_ = std::chrono::steady_clock::now();
    if (self->closing_) co_return;
    self->on_data(self->read_buffer_);
    // Nothing left over: give the buffer back if the connection went quiet (a small read) or
    // the buffer grew large for one big frame.
    quiet = self->read_buffer_.empty() && n < kKeepBufferAbove;
    if (quiet || (self->read_buffer_.empty() && self->read_buffer_.capacity() > 4 * kReadChunk)) {
      std::string().swap(self->read_buffer_);
    }
  }
}

asio::awaitable<void> Connection::write_loop(std::shared_ptr<Connection> self) {
  for (;;) {
    if (self->closed_) co_return;
    if (self->pending_.empty()) {
      if (self->closing_) {
        self->close();
        co_return;
      }
      boost::system::error_code ec;
      self->wake_.expires_at(asio::steady_timer::time_point::max());
      co_await self->wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    std::swap(self->pending_, self->writing_);
    self->on_write_started();
    boost::system::error_code ec;
    co_await asio::async_write(self->socket_, asio::buffer(self->writing_), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      self->close();
      co_return;
    }
    self->last_write_ = std::chrono::steady_clock::now();
    // Keep a moderate buffer for the next batch; release a huge one, and a large one after a
    // small write (the burst that grew it is over).
    const std::size_t written = self->writing_.size();
    const std::size_t capacity = self->writing_.capacity();
    self->writing_.clear();
    if (capacity > (4u << 20) || (capacity > kKeepWriteCapacityBelow && written < kSmallWrite)) {
      std::string().swap(self->writing_);
    }
    self->on_write_done();
  }
}

}  // namespace carrier::net
