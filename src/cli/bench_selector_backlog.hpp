#pragma once

// carrier bench selector-backlog: a consumer's selector over a large unmatched backlog (issue
// 17's target: 10,000 matching messages cost the same behind 1,000,000 refused ones as behind
// none, within 2x). Over STOMP against a running broker: fills a new queue with --backlog
// messages the selector refuses, subscribes with the selector, then times --count matching
// messages sent in windows and each window received, with the broker's CPU time when --pid
// gives it.

#include <CLI/CLI.hpp>

namespace carrier::cli::bench {

void add_selector_backlog_command(CLI::App& bench);

}  // namespace carrier::cli::bench
