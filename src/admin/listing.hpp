#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "admin/shard_snapshot.hpp"
#include "base/result.hpp"

namespace carrier::admin {

// One page of a table the admin API lists (destinations, connections): filtered, sorted, cut.
// `offset`/`limit` page through 100k rows; `total` is how many matched the filter.
struct PageRequest {
  std::string filter;  // a substring of the name (destinations) or peer/protocol (connections)
  std::string sort = "name";
  bool descending = false;
  std::size_t offset = 0;
  std::size_t limit = 100;
};

struct DestinationRow {
  std::string kind;  // "queue", "temp-queue", "subscription"
  std::string name;
  QueueRow stats;
};

template <class Row>
struct Page {
  std::size_t total = 0;
  std::vector<Row> rows;
};

// The rows the destination list pages through: queues, temporary queues and named
// subscriptions (not the broker's own `$` queues), in name order. Built once per snapshot, so
// each page request only filters and sorts pointers (admin::SnapshotCache).
std::vector<DestinationRow> destination_rows(std::vector<QueueRow> queues);

// Of `by_name` (destination_rows' order), those of `kind` ("" for all) matching the filter.
// Sort keys: name, depth, bytes, unacked, consumers, enqueued, age (of the oldest ready
// message: oldest first in descending order), ties in name order; an unknown one is an
// Errc::invalid_argument naming the allowed keys. Only the page's rows are sorted fully
// (a partial sort): a page of 100 out of 100k rows costs O(n log 100).
Result<Page<DestinationRow>> list_destinations(const std::vector<DestinationRow>& by_name, std::string_view kind,
                                               const PageRequest& request);
// The same from a snapshot's rows (tests; one-off callers).
Result<Page<DestinationRow>> list_destinations(std::vector<QueueRow> queues, std::string_view kind,
                                               const PageRequest& request);

// Sort keys: id, protocol, peer, since, queued, client, user, in, out (rates). The filter is a
// substring of the peer, client id or user, or a protocol name.
Result<Page<ConnectionRow>> list_connections(std::vector<ConnectionRow> connections, const PageRequest& request);

// Topics with plain subscriptions. Sort keys: name (the filter), subscriptions, consumers,
// depth, bytes, unacked, enqueued.
Result<Page<TopicRow>> list_topics(std::vector<TopicRow> topics, const PageRequest& request);

}  // namespace carrier::admin
