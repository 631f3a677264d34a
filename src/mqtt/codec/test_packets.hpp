#pragma once

// Sample packets of every type for the codec tests: valid for the version they are made for,
// with every field the version has set to something other than its default.

#include <string>
#include <vector>

#include "mqtt/codec/packet.hpp"

namespace carrier::mqtt::codec::testing {

inline std::vector<Packet> sample_packets(Version v) {
  using namespace std::string_literals;
  const bool v5 = v == Version::v5;
  std::vector<Packet> out;

  Connect c;
  c.version = v;
  c.clean_start = false;
  c.keep_alive = 60;
  c.client_id = "client-\xC3\xA9";
  c.username = "user";
  c.password = "p\0ss"s;
  Will w;
  w.topic = "will/topic";
  w.payload = "gone\xFF"s;
  w.qos = 2;
  w.retain = true;
  if (v5) {
    w.properties.will_delay_interval = 5;
    w.properties.message_expiry_interval = 60;
    w.properties.content_type = "text/plain";
    w.properties.payload_format_indicator = 1;
    w.properties.user_properties = {{"a", "b"}};
    c.properties.session_expiry_interval = 300;
    c.properties.receive_maximum = 20;
    c.properties.maximum_packet_size = 65536;
    c.properties.topic_alias_maximum = 10;
    c.properties.request_problem_information = 0;
    c.properties.user_properties = {{"x", "y"}};
  }
  c.will = w;
  out.push_back(c);

  Connect bare;
  bare.version = v;
  bare.client_id = v == Version::v3_1 ? "c" : "";
  out.push_back(bare);

  Connack ack;
  ack.session_present = v != Version::v3_1;
  if (v5) {
    ack.properties.assigned_client_identifier = "auto-1";
    ack.properties.server_keep_alive = 30;
    ack.properties.receive_maximum = 100;
    ack.properties.topic_alias_maximum = 16;
    ack.properties.maximum_packet_size = 1u << 20;
  }
  out.push_back(ack);
  Connack refused;
  refused.reason = v5 ? ReasonCode::bad_authentication_method : static_cast<ReasonCode>(5);
  out.push_back(refused);

  for (std::uint8_t qos : {0, 1, 2}) {
    Publish p;
    p.qos = qos;
    p.dup = qos > 0;
    p.retain = qos == 1;
    p.topic = "a/b/c";
    p.packet_id = qos > 0 ? static_cast<std::uint16_t>(1000 + qos) : 0;
    p.payload = qos == 2 ? std::string(300, 'x') : "payload\0bytes"s;
    if (v5 && qos == 1) {
      p.properties.payload_format_indicator = 1;
      p.properties.message_expiry_interval = 10;
      p.properties.content_type = "text/plain";
      p.properties.response_topic = "reply/here";
      p.properties.correlation_data = "\x01\x02"s;
      p.properties.subscription_identifiers = {1, 200000};
      p.properties.topic_alias = 4;
      p.properties.user_properties = {{"k", "v"}, {"k", "w"}};
    }
    out.push_back(p);
  }
  if (v5) {
    Publish aliased;
    aliased.topic = "";
    aliased.properties.topic_alias = 7;
    out.push_back(aliased);
  }
  Publish empty_payload;
  empty_payload.topic = "t";
  out.push_back(empty_payload);

  Puback puback{.packet_id = 1};
  Pubrec pubrec{.packet_id = 2};
  Pubrel pubrel{.packet_id = 3};
  Pubcomp pubcomp{.packet_id = 65535};
  out.push_back(puback);
  out.push_back(pubrec);
  out.push_back(pubrel);
  out.push_back(pubcomp);
  if (v5) {
    out.push_back(Puback{.packet_id = 9, .reason = ReasonCode::no_matching_subscribers});
    Pubrec rec{.packet_id = 10, .reason = ReasonCode::quota_exceeded};
    rec.properties.reason_string = "full";
    rec.properties.user_properties = {{"why", "quota"}};
    out.push_back(rec);
    out.push_back(Pubrel{.packet_id = 11, .reason = ReasonCode::packet_identifier_not_found});
    Pubcomp comp{.packet_id = 12};
    comp.properties.reason_string = "ok";
    out.push_back(comp);
  }

  Subscribe sub;
  sub.packet_id = 7;
  sub.topics.push_back({"a/+/c", 0});
  sub.topics.push_back({"#", 1});
  sub.topics.push_back({"$share/g/x/#", 2});
  if (v5) {
    sub.topics.push_back({"d", 1, true, true, 2});
    sub.topics.push_back({"e", 2, false, false, 1});
    sub.properties.subscription_identifiers = {42};
    sub.properties.user_properties = {{"s", "t"}};
  }
  out.push_back(sub);

  Suback suback;
  suback.packet_id = 7;
  suback.reasons = {ReasonCode::granted_qos_0, ReasonCode::granted_qos_1, ReasonCode::granted_qos_2,
                    ReasonCode::unspecified_error};
  if (v5) {
    suback.reasons.push_back(ReasonCode::topic_filter_invalid);
    suback.properties.reason_string = "partly";
  }
  out.push_back(suback);

  Unsubscribe unsub;
  unsub.packet_id = 8;
  unsub.filters = {"a/+/c", "#"};
  if (v5) unsub.properties.user_properties = {{"u", "v"}};
  out.push_back(unsub);

  Unsuback unsuback;
  unsuback.packet_id = 8;
  if (v5) {
    unsuback.reasons = {ReasonCode::success, ReasonCode::no_subscription_existed};
    unsuback.properties.reason_string = "done";
  }
  out.push_back(unsuback);

  out.push_back(Pingreq{});
  out.push_back(Pingresp{});
  out.push_back(Disconnect{});
  if (v5) {
    Disconnect d{.reason = ReasonCode::session_taken_over};
    d.properties.reason_string = "another connection";
    d.properties.session_expiry_interval = 0;
    out.push_back(d);
    out.push_back(Disconnect{.reason = ReasonCode::disconnect_with_will_message});
    out.push_back(Auth{});
    Auth a{.reason = ReasonCode::continue_authentication};
    a.properties.authentication_method = "SCRAM-SHA-1";
    a.properties.authentication_data = "\x00\x01"s;
    out.push_back(a);
  }
  return out;
}

}  // namespace carrier::mqtt::codec::testing
