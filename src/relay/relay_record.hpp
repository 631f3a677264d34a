#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/message.hpp"
#include "relay/directory.hpp"

// Relay state that survives a restart, kept as messages in reserved queues like MQTT's
// `$mqtt-sessions` (every store backend keeps them with no record kind of its own). Fields are
// message properties with a format version; a record that does not decode is logged and
// skipped at start-up.
//
// `$relay-peers`: one per connected peer (id, user, relay address, lease, the deadline last
//   recorded, joined group), replaced when it changes: the new record and the removal of the
//   old go in one store batch. The deadline is rewritten once a quarter of the lease has gone
//   by since it was last recorded, not on every poll.
// `$relay-listens`: one per listen of a peer (peer, pipe id, the listen's request id). The
//   pipe's messages themselves wait in the broker (its queue, or the durable subscription).
// `$relay-mail`: one per response waiting in a peer's mailbox (its JXME bytes as the body),
//   removed when a poll acknowledges it.
// `$relay-directory`: one per pipe or group created.
namespace carrier::relay {

inline constexpr std::string_view kPeersQueue = "$relay-peers";
inline constexpr std::string_view kListensQueue = "$relay-listens";
inline constexpr std::string_view kMailQueue = "$relay-mail";
inline constexpr std::string_view kDirectoryQueue = "$relay-directory";

struct PeerRecord {
  std::string peer;
  std::string user;  // who connected it; empty: anonymous
  std::string relay_address;
  std::int64_t lease_ms = 0;
  std::int64_t expires_ms = 0;  // epoch ms
  std::string group;
  bool operator==(const PeerRecord&) const = default;
};

struct ListenRecord {
  std::string peer;
  std::string pipe_id;
  std::string request_id;
  bool operator==(const ListenRecord&) const = default;
};

struct MailRecord {
  std::string peer;
  std::string bytes;  // one encoded JXME message
  bool operator==(const MailRecord&) const = default;
};

model::MessagePtr encode_peer(const PeerRecord& r, model::MessageId id, std::int64_t now_ms);
std::optional<PeerRecord> decode_peer(const model::Message& m);
model::MessagePtr encode_listen(const ListenRecord& r, model::MessageId id, std::int64_t now_ms);
std::optional<ListenRecord> decode_listen(const model::Message& m);
model::MessagePtr encode_mail(const MailRecord& r, model::MessageId id, std::int64_t now_ms);
std::optional<MailRecord> decode_mail(const model::Message& m);
model::MessagePtr encode_entry(const Directory::Entry& e, model::MessageId id, std::int64_t now_ms);
std::optional<Directory::Entry> decode_entry(const model::Message& m);

}  // namespace carrier::relay
