#include "mqtt/codec/encoder.hpp"

#include <type_traits>

namespace carrier::mqtt::codec {

void encode(const Packet& packet, Version version, std::string& out) {
  std::visit(
      [&](const auto& p) {
        if constexpr (std::is_same_v<std::decay_t<decltype(p)>, Connect>) {
          encode(p, out);
        } else {
          encode(p, version, out);
        }
      },
      packet);
}

}  // namespace carrier::mqtt::codec
