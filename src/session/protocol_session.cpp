#include "session/protocol_session.hpp"

namespace carrier::session {

ProtocolSession::ProtocolSession(std::shared_ptr<net::Transport> transport) : transport_(std::move(transport)) {
  transport_->set_handler(this);
}

ProtocolSession::~ProtocolSession() {
  if (transport_->handler() == this) transport_->set_handler(nullptr);
}

}  // namespace carrier::session
