#include "session/slow_consumer.hpp"

#include "base/logging.hpp"

namespace carrier::session {

bool SlowConsumer::drop(spdlog::logger& log, const net::Transport& transport, std::string_view subscription) {
  if (policy_ == net::SlowConsumerPolicy::disconnect) {
    log.warn("{} slow consumer: {} bytes of output unread, closing", transport.log_prefix(), transport.queued_bytes());
    return false;
  }
  if (dropped_++ == 0) {
    if (subscription.empty()) {
      log.warn("{} slow consumer: {} bytes of output unread, dropping {} for it", transport.log_prefix(),
               transport.queued_bytes(), what_);
    } else {
      log.warn("{} slow consumer: {} bytes of output unread, dropping {} for it (subscription {})",
               transport.log_prefix(), transport.queued_bytes(), what_, subscription);
    }
  }
  return true;
}

void SlowConsumer::log_dropped(spdlog::logger& log, const net::Transport& transport) const {
  if (dropped_ != 0) log.info("{} dropped {} {} as a slow consumer", transport.log_prefix(), dropped_, what_);
}

}  // namespace carrier::session
