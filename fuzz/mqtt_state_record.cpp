// libFuzzer target for the MQTT state records kept in reserved queues (mqtt/session_record.hpp):
// session records (formats 1 and 2), subscription records, delayed wills, QoS 2 exchanges. They
// come back from the store at start-up, so a damaged or foreign record must be refused, never
// crash the broker.
//
// Input: lines of `name=value`, the record message's properties in order (a line without `=`
// is a name with an empty value); the first byte picks the body. Whatever a decoder accepts must
// survive its own encoder: encode, decode again, and get the same record.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "mqtt/session_record.hpp"

namespace {

using namespace carrier;

model::Message message_from(std::string_view text) {
  model::Message m;
  m.destination = model::Destination{model::DestinationKind::queue, "$mqtt-fuzz"};
  m.persistent = true;
  if (!text.empty()) {
    if (text.front() & 1) m.body = std::make_shared<const std::string>(text.substr(0, text.size() / 2));
    text.remove_prefix(1);
  }
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    const auto eq = line.find('=');
    m.properties.emplace_back(std::string(line.substr(0, eq)),
                              eq == std::string_view::npos ? std::string() : std::string(line.substr(eq + 1)));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const model::Message m = message_from(std::string_view(reinterpret_cast<const char*>(data), size));
  const model::MessageId id{0x0123456789abcdefULL, 0x8000000000000001ULL};
  constexpr std::int64_t kNow = 1'800'000'000'000;

  if (auto session = mqtt::decode_session(m)) {
    auto again = mqtt::decode_session(*mqtt::encode_session(*session, id, kNow));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *session);
    (void)session->deadline_ms(kNow);
  }
  if (auto sub = mqtt::decode_subscription(m)) {
    auto again = mqtt::decode_subscription(*mqtt::encode_subscription(*sub, id, kNow));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *sub);
  }
  if (auto qos2 = mqtt::decode_qos2(m)) {
    auto again = mqtt::decode_qos2(*mqtt::encode_qos2(*qos2, id, kNow));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == *qos2);
  }
  if (auto will = mqtt::decode_will(m)) {
    FUZZ_CHECK(will->will != nullptr);
    auto again = mqtt::decode_will(*mqtt::encode_will(*will));
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(again->client_id == will->client_id);
    FUZZ_CHECK(again->due_ms == will->due_ms);
  }
  return 0;
}
