#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "federation/codec/frame.hpp"
#include "federation/options.hpp"
#include "auth/permissions.hpp"
#include "federation/token_bucket.hpp"
#include "net/transport.hpp"

namespace carrier::auth {
struct Outcome;
}

namespace carrier::federation {

class Node;

// One link to another Carrier node over one byte stream (net::Connection): the codec's frames
// both ways, whichever side opened it. The side that dialled sends `negotiate` (version, the
// cost it asks for) and, once agreed, `establish` (its node id, its demand, its credentials);
// the side that accepted checks the credentials against the broker's users and answers with
// its own node and demand. From then on either side may push, and each re-sends `establish`
// whenever the demand it advertises changes. A refused frame is answered with an error result
// and the link stays up, until the peer has sent `max_bad_frames` of them: then it is dropped
// (and, if this side dialled, dialled again after a back-off).
// Lifetime: held by its transport while it runs, and by the Node while it is open.
// Runs on: shard 0, with everything federation keeps.
class Link final : public net::TransportHandler, public std::enable_shared_from_this<Link> {
 public:
  using PushDone = std::function<void(const std::string& result)>;

  // `outbound`: the configured link this side dialled (null: accepted); shared, as the link
  // may outlive its removal at runtime.
  Link(std::shared_ptr<net::Transport> transport, Node& node, std::uint64_t id, std::int32_t session,
       std::shared_ptr<const LinkOptions> outbound);
  ~Link() override;

  // Starts the handshake (outbound) or waits for it (inbound).
  void begin();

  void on_data(std::string& buffer) override;
  void on_closed() override;
  void shutdown() override;

  bool is_up() const { return up_; }
  bool is_closed() const { return transport_->is_closing(); }
  // Dropped for refused frames: its dialler does not reset the back-off.
  bool misbehaved() const { return misbehaved_; }
  std::uint64_t id() const { return id_; }
  std::int32_t session() const { return session_; }
  const codec::Id128& peer_id() const { return peer_id_; }
  const LinkOptions* outbound() const { return outbound_.get(); }
  // Drops the link (an operator removed it, or the node stops dialling it).
  void close(const std::string& why) { fail(why); }

  // --- what the admin API and /metrics report (protocol/federation_links.hpp) ---
  struct Counters {
    std::uint64_t pushed = 0;         // acknowledged by the far node
    std::uint64_t push_failures = 0;  // refused by the far node
    std::uint64_t received = 0;       // taken in (not duplicates)
    std::uint64_t replies_sent = 0;   // sendbacks
    std::uint64_t bytes_in = 0;
    std::uint64_t bytes_out = 0;
  };
  Counters& counters() { return counters_; }
  const Counters& counters() const { return counters_; }
  std::size_t in_flight() const { return pending_.size(); }
  std::uint32_t max_rate() const { return max_rate_; }
  codec::RateUnit max_rate_unit() const { return rate_unit_; }
  bool handshaking() const { return !up_ && !transport_->is_closing(); }

  // The ACL as it applies to the user the far node logged in as (links this node accepted;
  // null for links it dialled, whose far node it chose): what it may push into (write) and
  // draw demand from (read), per destination.
  auth::Permissions* permissions() { return permissions_.get(); }
  const std::string& user() const { return user_; }
  // The configured name, or the peer's address for an accepted link.
  const std::string& name() const { return name_; }
  const std::string& log_prefix() const { return transport_->log_prefix(); }

  // Sends the node's current advertisement (its demand changed).
  void advertise();
  // Pushes a message; `done` gets the far node's result text ("ok", "ok duplicate",
  // "error: ..."), unless the link closes first.
  void push(codec::PushRequest request, PushDone done);
  // setMaxRate from the far node: pushes over this link wait for the token bucket (rate 0
  // lifts the limit). They queue here, bounded by the forwarding consumers' prefetch, so the
  // sending side's queues hold the rest.
  // Sends a reply back (sendback); `done` as for push. Not held by the token bucket: replies
  // are few and answer requests this link already carried.
  void sendback(codec::SendbackRequest request, PushDone done);
  void set_max_rate(std::uint32_t rate, codec::RateUnit unit);
  std::size_t throttled() const { return throttled_.size(); }
  // Answers a request (the Node's answer to a push comes back here).
  void answer(std::uint32_t request_id, std::string text);

 private:
  // A push or sendback that must wait while the broker holds producers back (Node::holds_arrivals).
  bool holds(const codec::Frame& frame) const;
  void handle(codec::Frame& frame);
  void on_negotiate(std::uint32_t request_id, const codec::NegotiateRequest& request);
  void on_establish(std::uint32_t request_id, codec::EstablishRequest& request);
  void on_authenticated(std::uint32_t request_id, codec::EstablishRequest request, const auth::Outcome& outcome);
  void accept_peer(const codec::RemoteNode& peer);
  void send_establish();
  void send(std::uint32_t request_id, codec::FrameBody body);
  void request(codec::FrameBody body, std::function<void(codec::Frame&)> on_answer);
  void drain_throttled();
  void bad_frame(std::uint32_t operation, std::uint32_t request_id, const std::string& why);
  void fail(const std::string& why);

  std::shared_ptr<net::Transport> transport_;
  Node& node_;
  std::uint64_t id_;
  std::int32_t session_;
  std::shared_ptr<const LinkOptions> outbound_;
  Counters counters_;
  std::unique_ptr<auth::Permissions> permissions_;
  std::string user_;
  std::uint32_t max_rate_ = 0;
  std::string name_;
  codec::Id128 peer_id_;
  bool up_ = false;
  bool authenticating_ = false;
  bool misbehaved_ = false;
  bool failed_ = false;  // fail() said why it closes
  std::uint32_t bad_frames_ = 0;
  std::uint32_t next_request_ = 1;
  std::unordered_map<std::uint32_t, std::function<void(codec::Frame&)>> pending_;
  struct ThrottledPush {
    codec::PushRequest request;
    PushDone done;
  };
  TokenBucket bucket_;
  codec::RateUnit rate_unit_ = codec::RateUnit::messages_per_second;
  std::deque<ThrottledPush> throttled_;
  std::unique_ptr<net::asio::steady_timer> throttle_timer_;
  std::unique_ptr<net::asio::steady_timer> establish_timer_;  // begin() until up
  bool throttle_armed_ = false;
};

}  // namespace carrier::federation
