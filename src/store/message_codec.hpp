#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "model/message.hpp"

namespace carrier::store {

// The one byte layout of a model::Message at rest, shared by every backend (the journal's
// message records, the SQLite/Postgres body column). Pure functions: no I/O, no logging, no
// clocks, so they can be fuzzed alone. The layout is in docs/storage.md ("Message encoding").
//
// Versioned: the first byte is the format version. A decoder reads every version it knows and
// rejects any other with Errc::corrupt_data naming the version, so an old binary never
// misreads a newer journal.
inline constexpr std::uint8_t kMessageFormatVersion = 1;

// Exact number of bytes encode_message() appends for `m`, so callers can reserve once (a
// 16 MiB body is then copied exactly once).
std::size_t encoded_message_size(const model::Message& m);

// Appends the encoding of `m` to `out`.
void encode_message(const model::Message& m, std::string& out);
std::string encode_message(const model::Message& m);

// Decodes exactly one message occupying all of `bytes`. Every length is checked against what is
// left before anything is allocated; trailing bytes, unknown flags, an unknown destination kind
// or an unknown version are Errc::corrupt_data with the byte offset in the detail.
Result<model::Message> decode_message(std::string_view bytes);

}  // namespace carrier::store
