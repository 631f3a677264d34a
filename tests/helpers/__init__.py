"""Helpers for Carrier's integration tests: broker processes, raw STOMP sockets, bounded waits."""

# Every STOMP version Carrier claims; protocol basics run against each.
STOMP_VERSIONS = ["1.0", "1.1", "1.2"]
