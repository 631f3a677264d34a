// Deliveries to the client: PUBLISH at min(message QoS, subscription QoS), the client's receive
// maximum as the window, topic aliases, maximum packet size; PUBACK / PUBREC / PUBCOMP back.

#include <fmt/format.h>

#include "base/logging.hpp"
#include "mqtt/codec/encoder.hpp"
#include "mqtt/message_mapping.hpp"
#include "mqtt/topic_map.hpp"
#include "mqtt/session.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

void Session::deliver(core::ConsumerId id, std::vector<core::Delivery> batch) {
  if (is_closing() || !by_consumer_.contains(id)) return;  // the core takes them back itself
  if (!backlog_) backlog_ = std::make_unique<std::deque<Outgoing>>();
  for (auto& d : batch) backlog_->push_back(Outgoing{id, std::move(d)});
  pump();
  flush();
}

void Session::pump() {
  // Settling a delivery can dispatch more to us at once (a private subscription's queue lives
  // on this shard): they join the backlog, and this loop takes them in turn.
  if (!connected_ || is_closing() || pumping_ || !backlog_) return;
  pumping_ = true;
  while (!backlog_->empty() && !is_closing()) {
    Outgoing& out = backlog_->front();
    auto by = by_consumer_.find(out.consumer);
    if (by == by_consumer_.end()) {
      backlog_->pop_front();  // unsubscribed: the core has it back
      continue;
    }
    auto sub = subscriptions_.find(by->second);
    if (sub == subscriptions_.end()) {
      backlog_->pop_front();
      continue;
    }
    // In order: a subscription waiting for its SUBACK, or a full window, holds the rest back.
    if (!sub->second.ready) break;
    if (output_full()) {
      // Past the output bound. QoS 0 for a private subscription (at most once) falls under the
      // slow-consumer policy; anything else waits here, counted in the core and holding its
      // subscription's credit, until writes drain the output (on_write_done pumps again).
      if (sub->second.named || std::min(message_qos(*out.delivery.message), sub->second.options.qos) != 0) break;
      if (!slow_consumer_.drop(*log(), transport())) {
        disconnect(codec::ReasonCode::quota_exceeded, "slow consumer");
        close_after_flush(session::SlowConsumer::kGoodbyeGrace);  // the client is not reading
        break;
      }
      const auto consumer = out.consumer;
      const auto tag = out.delivery.tag;
      backlog_->pop_front();
      settle(consumer, tag);
      continue;
    }
    if (!send_delivery(out)) break;
    backlog_->pop_front();
  }
  pumping_ = false;
}

std::uint16_t Session::next_packet_id() {
  do {
    last_packet_id_ = static_cast<std::uint16_t>(last_packet_id_ == 65535 ? 1 : last_packet_id_ + 1);
  } while (inflight_.contains(last_packet_id_));
  return last_packet_id_;
}

void Session::settle(core::ConsumerId consumer, std::uint64_t tag) { broker_.ack(consumer, {tag}, nullptr); }

bool Session::send_delivery(Outgoing& out) {
  const Subscription& sub = subscriptions_.at(by_consumer_.at(out.consumer));
  const model::Message& m = *out.delivery.message;
  // `$` topics are not for filters starting with a wildcard; no-local skips our own messages.
  if ((sub.wildcard_first && m.destination.name.starts_with('$')) || (sub.options.no_local && m.origin == id())) {
    settle(out.consumer, out.delivery.tag);
    return true;
  }
  const std::uint8_t qos = std::min(message_qos(m), sub.options.qos);
  if (qos > 0 && inflight_.size() >= outbound_window_) return false;
  const bool v5 = version_ == codec::Version::v5;
  // RETAIN is set on retained messages sent for a new subscription; on live ones only with
  // retain-as-published (MQTT 5), never before MQTT 5 (3.1.1 3.3.1.3).
  const bool retain = m.from_retained || (v5 && sub.options.retain_as_published && m.retain);
  if (last_core_name_ != m.destination.name) {
    last_core_name_ = m.destination.name;
    last_mqtt_name_ = to_mqtt_name(m.destination.name);
  }
  std::optional<codec::Publish> publish;
  if (last_mqtt_name_) {
    const std::int64_t now = m.expires_ms != 0 ? broker_.now_ms() : 0;
    publish = to_publish_header(m, *last_mqtt_name_, OutboundOptions{qos, retain, version_, now, sub.options.identifier});
  }
  if (!publish) {
    settle(out.consumer, out.delivery.tag);  // expired, or a topic MQTT cannot spell
    return true;
  }
  publish->dup = qos > 0 && out.delivery.redelivered;
  if (qos > 0) publish->packet_id = next_packet_id();
  std::optional<std::uint16_t> new_alias;
  if (v5 && client_topic_alias_maximum_ > 0) {
    auto it = outbound_aliases_.find(publish->topic);
    if (it != outbound_aliases_.end()) {
      publish->properties.topic_alias = it->second;
      publish->topic.clear();
    } else if (outbound_aliases_.size() < client_topic_alias_maximum_) {
      new_alias = static_cast<std::uint16_t>(outbound_aliases_.size() + 1);
      publish->properties.topic_alias = new_alias;
    }
  }
  // Encoded in place; taken back if it is larger than the client accepts.
  std::string& buffer = this->out();
  const std::size_t before = buffer.size();
  codec::encode_publish(*publish, m.body ? std::string_view(*m.body) : std::string_view(), version_, buffer);
  if (client_max_packet_size_ != 0 && buffer.size() - before > client_max_packet_size_) {
    // Dropped as if delivered (MQTT 5 3.1.2.11.4).
    log()->debug("{} message of {} bytes exceeds the client's maximum packet size {}: dropped", log_prefix(),
                 buffer.size() - before, client_max_packet_size_);
    buffer.resize(before);
    settle(out.consumer, out.delivery.tag);
    return true;
  }
  if (new_alias) outbound_aliases_.emplace(publish->topic, *new_alias);
  transport().count_out();
  if (qos == 0) {
    written_acks_.stage(out.consumer, out.delivery.tag);
  } else {
    inflight_.emplace(publish->packet_id, Inflight{out.consumer, out.delivery.tag, qos, false});
  }
  return true;
}

void Session::handle_puback(const codec::Puback& p) {
  auto it = inflight_.find(p.packet_id);
  if (it == inflight_.end() || it->second.qos != 1) return;  // unknown (e.g. from before a take-over)
  settle(it->second.consumer, it->second.tag);
  inflight_.erase(it);
  pump();
}

void Session::handle_pubrec(const codec::Pubrec& p) {
  auto it = inflight_.find(p.packet_id);
  if (it == inflight_.end() || it->second.qos != 2) {
    send(codec::Pubrel{.packet_id = p.packet_id, .reason = codec::ReasonCode::packet_identifier_not_found});
    return;
  }
  if (!it->second.released) {
    // The client has the message: it leaves the broker now, whatever happens to the PUBREL and
    // PUBCOMP (exactly once: the PUBLISH is never sent again once PUBREC came, MQTT 4.3.3).
    // A persistent session records the PUBREL it owes in the ack's store batch, so after a
    // restart it resumes with PUBREL, and the message is neither lost nor sent twice.
    // The PUBREL waits for that batch: once the client has it, the PUBLISH must never come again.
    it->second.released = true;
    if (session_expiry_ > 0 && !codec::is_failure(p.reason)) {
      const std::uint16_t packet_id = p.packet_id;
      broker_.ack(it->second.consumer, {it->second.tag}, {qos2_record(false, packet_id)},
                  session::bind_weak(this, [packet_id](const auto& s, Status st) {
                    if (s->is_closing()) return;
                    if (!st) log()->warn("{} QoS 2 state not stored: {}", s->log_prefix(), st.error().to_string());
                    s->send(codec::Pubrel{.packet_id = packet_id});
                    s->flush();
                  }));
      return;
    }
    settle(it->second.consumer, it->second.tag);
  }
  if (codec::is_failure(p.reason)) {
    drop_qos2_record(outbound_records_, p.packet_id);
    inflight_.erase(it);  // a refusing PUBREC ends the exchange
    pump();
    return;
  }
  send(codec::Pubrel{.packet_id = p.packet_id});
}

void Session::handle_pubcomp(const codec::Pubcomp& p) {
  auto it = inflight_.find(p.packet_id);
  if (it == inflight_.end() || it->second.qos != 2 || !it->second.released) return;
  drop_qos2_record(outbound_records_, p.packet_id);
  inflight_.erase(it);
  pump();
}

}  // namespace carrier::mqtt
