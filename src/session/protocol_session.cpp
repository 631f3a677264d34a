#include "session/protocol_session.hpp"

namespace carrier::session {

ProtocolSession::ProtocolSession(std::shared_ptr<net::Transport> transport) : transport_(std::move(transport)) {
  transport_->set_handler(this);
}

ProtocolSession::~ProtocolSession() {
  if (transport_->handler() == this) transport_->set_handler(nullptr);
}

void ProtocolSession::limit_message_rate(std::uint32_t per_second, std::uint32_t burst) {
  if (per_second == 0) return;
  message_rate_ = std::make_unique<MessageRate>(per_second, burst, MessageRate::Clock::now());
}

bool ProtocolSession::take_message_token() {
  if (!message_rate_) return true;
  const auto now = MessageRate::Clock::now();
  if (message_rate_->take(now)) return true;
  pause_reading();
  if (!rate_resume_) rate_resume_ = std::make_unique<net::asio::steady_timer>(transport_->executor());
  rate_resume_->expires_after(message_rate_->wait(now));
  // The timer dies with the session (its handler then sees operation_aborted); the transport
  // is held weakly so a closed one is not kept.
  rate_resume_->async_wait([weak = std::weak_ptr<net::Transport>(transport_)](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto t = weak.lock()) t->resume_reading();
  });
  return false;
}

}  // namespace carrier::session
