// PUBLISH and PUBREL from the client: topic aliases, QoS 1 and 2 flows, receive maximum,
// PUBACK / PUBREC once the broker has the message (durable for QoS >= 1).

#include <fmt/format.h>

#include "base/logging.hpp"
#include "mqtt/codec/data_types.hpp"
#include "mqtt/message_mapping.hpp"
#include "mqtt/reason_codes.hpp"
#include "mqtt/session.hpp"
#include "mqtt/session_record.hpp"
#include "mqtt/topic_map.hpp"
#include "mqtt/log.hpp"

namespace carrier::mqtt {

void Session::handle_publish(codec::Publish& p) {
  const bool v5 = version_ == codec::Version::v5;
  transport().count_in();
  if (v5 && !p.properties.subscription_identifiers.empty()) {
    disconnect(codec::ReasonCode::protocol_error, "a client PUBLISH carries no subscription identifier");
    return;
  }
  // Topic aliases (MQTT 5 3.3.2.3.4): set or used.
  std::string topic = std::move(p.topic);
  if (auto alias = p.properties.topic_alias) {
    if (*alias == 0 || *alias > options_.topic_alias_maximum) {
      disconnect(codec::ReasonCode::topic_alias_invalid,
                 fmt::format("topic alias {} is outside 1..{}", *alias, options_.topic_alias_maximum));
      return;
    }
    if (!topic.empty()) {
      inbound_aliases_[*alias] = topic;
    } else {
      auto it = inbound_aliases_.find(*alias);
      if (it == inbound_aliases_.end()) {
        disconnect(codec::ReasonCode::protocol_error, fmt::format("topic alias {} was never set", *alias));
        return;
      }
      topic = it->second;
    }
  }
  if (p.qos > 0) {
    if (v5 && inbound_unacked_ >= options_.receive_maximum) {
      disconnect(codec::ReasonCode::receive_maximum_exceeded,
                 fmt::format("more than {} unacknowledged QoS 1 and 2 PUBLISHes", options_.receive_maximum));
      return;
    }
    if (p.qos == 2) {
      auto it = inbound_qos2_.find(p.packet_id);
      if (it != inbound_qos2_.end()) {
        // A resend of a QoS 2 message the broker already has: never routed twice.
        if (it->second) send(codec::Pubrec{.packet_id = p.packet_id});
        return;
      }
    }
  }
  if (exceeds_levels(topic, options_.max_topic_levels)) {
    // Refused before it reaches the core, where each level would cost a lookup per shard.
    // MQTT 3.x cannot refuse a PUBLISH (acknowledging it would claim it was taken): closed.
    const std::string why = fmt::format("topic has more than {} levels", options_.max_topic_levels);
    if (!v5 || p.qos == 0) {
      disconnect(codec::ReasonCode::topic_name_invalid, why);
      return;
    }
    log()->debug("{} PUBLISH refused: {}", log_prefix(), why);
    ++inbound_unacked_;
    if (p.qos == 2) inbound_qos2_.emplace(p.packet_id, false);
    publishes_.push_back(InboundPublish{nullptr, p.qos, p.packet_id, codec::ReasonCode::topic_name_invalid});
    return;
  }
  InboundPublish in;
  in.qos = p.qos;
  in.packet_id = p.packet_id;
  if (v5 && p.properties.payload_format_indicator == 1 && !codec::is_valid_utf8(p.payload)) {
    // The payload says it is UTF-8 and is not (MQTT 5 3.3.2.3.2).
    if (p.qos == 0) {
      disconnect(codec::ReasonCode::payload_format_invalid, "payload is not the UTF-8 its format indicator says");
      return;
    }
    in.refused = codec::ReasonCode::payload_format_invalid;
  } else {
    in.message = to_core_message(std::move(p), topic, broker_.next_message_id(), received_at_ms_, id());
    if (auto st = broker_.check_destination(in.message->destination, false); !st) {
      if (p.qos == 0) {
        log()->debug("{} PUBLISH to '{}' dropped: {}", log_prefix(), topic, st.error().to_string());
        return;
      }
      in.message = nullptr;
      in.refused = reason_for(st.error().code, Operation::publish);
    } else if (!permissions_.allows(auth::Right::write, in.message->destination)) {
      // The ACL: MQTT 5 hears 0x87; QoS 0 and MQTT 3.x (which cannot refuse a PUBLISH) lose the
      // message silently, acknowledged all the same, as the specification and Mosquitto do.
      log()->debug("{} PUBLISH to '{}' refused: access denied", log_prefix(), topic.substr(0, 200));
      if (p.qos == 0) return;
      in.message = nullptr;
      if (v5) in.refused = codec::ReasonCode::not_authorized;
    }
  }
  if (p.qos > 0) ++inbound_unacked_;
  if (p.qos == 2) inbound_qos2_.emplace(p.packet_id, false);
  publishes_.push_back(std::move(in));
}

void Session::flush_publishes() {
  if (publishes_.empty()) return;
  std::vector<model::MessagePtr> messages;
  constexpr std::size_t kNoMessage = static_cast<std::size_t>(-1);
  struct Ack {
    std::uint8_t qos;
    std::uint16_t packet_id;
    codec::ReasonCode refused;
    std::size_t message = kNoMessage;  // its index in `messages`
  };
  std::vector<Ack> acks;
  std::vector<core::StateRecord> state;
  for (auto& in : publishes_) {
    // A persistent session records a QoS 2 PUBLISH it will PUBREC in the message's own store
    // batch: after a restart a resend is still recognised, never routed twice.
    if (in.qos == 2 && in.message && session_expiry_ > 0) state.push_back(qos2_record(true, in.packet_id));
    if (in.qos > 0) acks.push_back(Ack{in.qos, in.packet_id, in.refused, in.message ? messages.size() : kNoMessage});
    if (in.message) messages.push_back(std::move(in.message));
  }
  publishes_.clear();
  ++publish_batches_in_flight_;
  // MQTT 5 publishers hear "no matching subscribers" (0x10) in the PUBACK and PUBREC: the core
  // says which messages no subscription took while it routes them, before `done` can run.
  // Others never ask and pay nothing.
  auto unmatched = version_ == codec::Version::v5 && !acks.empty() ? std::make_shared<std::vector<bool>>() : nullptr;
  auto done = session::bind_weak(this, [acks = std::move(acks), unmatched](const auto& s, Status st) {
    --s->publish_batches_in_flight_;
    if (s->is_closing()) return;
    const bool v5 = s->version_ == codec::Version::v5;
    if (!st && !v5 && !acks.empty()) {
      // MQTT 3.x cannot refuse a PUBLISH: the client resends after reconnecting.
      log()->warn("{} messages not stored: {}", s->log_prefix(), st.error().to_string());
      s->close();
      return;
    }
    const codec::ReasonCode failed =
        st ? codec::ReasonCode::success : reason_for(st.error().code, Operation::publish);
    for (const auto& a : acks) {
      codec::ReasonCode reason = a.refused != codec::ReasonCode::success ? a.refused : failed;
      if (reason == codec::ReasonCode::success && unmatched && a.message < unmatched->size() && (*unmatched)[a.message]) {
        reason = codec::ReasonCode::no_matching_subscribers;
      }
      codec::Properties props;
      if (codec::is_failure(reason) && s->problem_information()) {
        props.reason_string = a.refused != codec::ReasonCode::success ? codec::to_string(reason)
                                                                       : st.error().to_string().substr(0, 200);
        if (!codec::is_valid_utf8(*props.reason_string)) props.reason_string.reset();
      }
      if (a.qos == 1) {
        --s->inbound_unacked_;
        s->send(codec::Puback{.packet_id = a.packet_id, .reason = reason, .properties = std::move(props)});
      } else if (!codec::is_failure(reason)) {
        s->inbound_qos2_[a.packet_id] = true;
        s->send(codec::Pubrec{.packet_id = a.packet_id, .reason = reason});
      } else {
        // A PUBREC with an error ends the exchange (MQTT 5 4.3.3).
        if (st) {
          s->drop_qos2_record(s->inbound_records_, a.packet_id);
        } else {
          s->inbound_records_.erase(a.packet_id);  // its batch was not stored
        }
        s->inbound_qos2_.erase(a.packet_id);
        --s->inbound_unacked_;
        s->send(codec::Pubrec{.packet_id = a.packet_id, .reason = reason, .properties = std::move(props)});
      }
    }
    if (s->shutting_down_ && s->publish_batches_in_flight_ == 0) {
      s->say_goodbye();
    }
    s->flush();
  });
  if (unmatched) {
    broker_.send(std::move(messages), std::move(state), std::move(done), *unmatched);
  } else {
    broker_.send(std::move(messages), std::move(state), std::move(done));
  }
}

bool Session::publishes_to_blocked_topic(const codec::Publish& p) const {
  const auto* pressure = broker_.pressure();
  if (pressure == nullptr || !pressure->any()) return false;
  std::string_view topic = p.topic;
  if (topic.empty() && p.properties.topic_alias) {
    auto it = inbound_aliases_.find(*p.properties.topic_alias);
    if (it == inbound_aliases_.end()) return false;  // handle_publish refuses the unknown alias
    topic = it->second;
  }
  return pressure->blocked(model::Destination{model::DestinationKind::topic, to_core_name(topic)}.key());
}

void Session::handle_pubrel(const codec::Pubrel& p) {
  if (inbound_qos2_.erase(p.packet_id) != 0) {
    --inbound_unacked_;
    auto record = inbound_records_.find(p.packet_id);
    if (record != inbound_records_.end()) {
      // PUBCOMP frees the packet id for the client's next message: only once the store no longer
      // holds the exchange, or after a restart that next message would be taken for a resend.
      const model::MessageId id = record->second;
      inbound_records_.erase(record);
      const std::uint16_t packet_id = p.packet_id;
      broker_.write_state({core::StateRecord{std::string(kQos2Queue), nullptr, id}},
                          session::bind_weak(this, [packet_id](const auto& s, Status st) {
                            if (s->is_closing()) return;
                            if (!st) log()->warn("{} QoS 2 state not removed: {}", s->log_prefix(), st.error().to_string());
                            s->send(codec::Pubcomp{.packet_id = packet_id});
                            s->flush();
                          }));
      return;
    }
    send(codec::Pubcomp{.packet_id = p.packet_id});
    return;
  }
  send(codec::Pubcomp{.packet_id = p.packet_id, .reason = codec::ReasonCode::packet_identifier_not_found});
}

}  // namespace carrier::mqtt
