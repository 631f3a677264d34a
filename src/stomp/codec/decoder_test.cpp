#include "stomp/codec/decoder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "stomp/codec/encoder.hpp"

namespace carrier::stomp::codec {
namespace {

using namespace std::string_literals;

constexpr Version kVersions[] = {Version::v1_0, Version::v1_1, Version::v1_2};

constexpr Command kCommands[] = {
    Command::connect,   Command::stomp,   Command::send,   Command::subscribe,
    Command::unsubscribe, Command::ack,   Command::nack,   Command::begin,
    Command::commit,    Command::abort,   Command::disconnect, Command::connected,
    Command::message,   Command::receipt, Command::error,
};

// A decoded stream: the frames in order, then whether it ended in an error (and which).
struct Decoded {
  std::vector<Frame> frames;
  std::optional<Error> error;
  std::size_t leftover = 0;  // bytes buffered but not consumed at the end
};

// Decodes `input` as if it all arrived at once.
Decoded decode_all(std::string_view input, Version version, const DecoderLimits& limits = {}) {
  Decoded out;
  for (;;) {
    auto step = decode(input, version, limits);
    if (!step) {
      out.error = step.error();
      break;
    }
    input.remove_prefix(step->consumed);
    if (!step->frame) break;
    out.frames.push_back(std::move(*step->frame));
  }
  out.leftover = input.size();
  return out;
}

// Feeds `input` in chunks whose ends are `cuts`, as a socket reader would: append to a buffer,
// decode until no progress, drop what was consumed, and skip decoding while the buffer is
// shorter than need_at_least (which checks that the hint never overshoots).
Decoded decode_in_chunks(std::string_view input, const std::vector<std::size_t>& cuts,
                         Version version, const DecoderLimits& limits = {}) {
  Decoded out;
  std::string buffer;
  std::size_t need = 0;
  std::size_t from = 0;
  auto pump = [&] {
    while (buffer.size() >= need) {
      auto step = decode(buffer, version, limits);
      if (!step) {
        out.error = step.error();
        return false;
      }
      EXPECT_LE(step->consumed, buffer.size());
      buffer.erase(0, step->consumed);
      if (!step->frame) {
        EXPECT_GT(step->need_at_least, buffer.size());
        need = step->need_at_least;
        return true;
      }
      need = 0;
      out.frames.push_back(std::move(*step->frame));
    }
    return true;
  };
  for (std::size_t cut : cuts) {
    buffer.append(input.substr(from, cut - from));
    from = cut;
    if (!pump()) break;
  }
  if (!out.error && from < input.size()) {
    buffer.append(input.substr(from));
    pump();
  }
  out.leftover = buffer.size();
  return out;
}

Decoded decode_bytewise(std::string_view input, Version version, const DecoderLimits& limits = {}) {
  std::vector<std::size_t> cuts;
  for (std::size_t i = 1; i <= input.size(); ++i) cuts.push_back(i);
  return decode_in_chunks(input, cuts, version, limits);
}

Frame decode_one(std::string_view input, Version version = Version::v1_2) {
  auto step = decode(input, version, {});
  EXPECT_TRUE(step.has_value()) << (step ? "" : step.error().to_string());
  if (!step || !step->frame) {
    ADD_FAILURE() << "no frame from " << testing::PrintToString(std::string(input));
    return {};
  }
  EXPECT_EQ(step->consumed, input.size());
  return *step->frame;
}

Error decode_error(std::string_view input, Version version = Version::v1_2,
                   const DecoderLimits& limits = {}) {
  auto result = decode_all(input, version, limits);
  if (!result.error) {
    ADD_FAILURE() << "no error from " << testing::PrintToString(std::string(input));
    return Error{Errc::invalid_argument};
  }
  return *result.error;
}

// Every frame the tests below decode successfully, for the split and byte-at-a-time checks.
const std::vector<std::string>& valid_frames() {
  static const std::vector<std::string> frames = [] {
    std::vector<std::string> f = {
        "CONNECT\naccept-version:1.0,1.1,1.2\nhost:carrier\nlogin:guest\npasscode:a\\b\n\n\0"s,
        "STOMP\r\naccept-version:1.2\r\nhost:/\r\n\r\n\0"s,
        "CONNECTED\nversion:1.2\nheart-beat:0,0\nserver:carrier/0.1\n\n\0"s,
        "SEND\ndestination:/queue/a\ncontent-type:text/plain\n\nhello\0"s,
        "SEND\ndestination:/queue/a\ncontent-length:7\n\nab\0cd\0e\0"s,
        "SEND\ndestination:/queue/a\ncontent-length:0\n\n\0"s,
        "SUBSCRIBE\nid:0\ndestination:/topic/x\nack:client-individual\n\n\0"s,
        "UNSUBSCRIBE\nid:0\n\n\0"s,
        "ACK\nid:12\ntransaction:tx1\n\n\0"s,
        "NACK\nid:12\n\n\0"s,
        "BEGIN\ntransaction:tx1\n\n\0"s,
        "COMMIT\ntransaction:tx1\n\n\0"s,
        "ABORT\ntransaction:tx1\n\n\0"s,
        "DISCONNECT\nreceipt:77\n\n\0"s,
        "MESSAGE\nsubscription:0\nmessage-id:007\ndestination:/queue/a\nx:a\\cb\\nc\\\\d\n\nbody\0"s,
        "RECEIPT\nreceipt-id:77\n\n\0"s,
        "ERROR\nmessage:malformed frame received\ncontent-type:text/plain\n\nsee above\0"s,
        "SEND\r\ndestination:/queue/crlf\r\nempty:\r\n:empty-name\r\nrepeat:1\r\nrepeat:2\r\n\r\nx\0"s,
        "\n\r\n\nSEND\ndestination:/queue/after-heart-beats\n\n\0\n\n"s,
        "MESSAGE\ncolon:a:b:c\n\n\0"s,
    };
    return f;
  }();
  return frames;
}

std::string all_valid_frames() {
  std::string stream;
  for (const auto& f : valid_frames()) stream += f;
  return stream;
}

// --- commands ---------------------------------------------------------------------------------

TEST(Decoder, DecodesEveryCommandInEveryVersion) {
  for (Version v : kVersions) {
    for (Command c : kCommands) {
      const std::string wire = std::string(to_string(c)) + "\nk:v\n\nbody\0"s;
      Frame f = decode_one(wire, v);
      EXPECT_EQ(f.command, c) << to_string(c);
      ASSERT_EQ(f.headers.size(), 1u);
      EXPECT_EQ(f.headers[0], std::make_pair("k"s, "v"s));
      EXPECT_EQ(f.body, "body");
    }
  }
}

TEST(Decoder, RejectsUnknownCommandNamingIt) {
  Error e = decode_error("SENDX\n\n\0"s);
  EXPECT_EQ(e.code, Errc::protocol_error);
  EXPECT_NE(e.detail.find("unknown command 'SENDX'"), std::string::npos) << e.detail;
  EXPECT_NE(e.detail.find("offset 0"), std::string::npos) << e.detail;

  // Commands are case-sensitive.
  EXPECT_EQ(decode_error("send\n\n\0"s).code, Errc::protocol_error);
  // The offset counts skipped heart-beats.
  e = decode_error("\n\nFOO\n\n\0"s);
  EXPECT_NE(e.detail.find("'FOO' at offset 2"), std::string::npos) << e.detail;
  // A bare EOL is always a heart-beat, so this is two heart-beats and a command line "\0".
  EXPECT_EQ(decode_error("\n\n\0\n"s).code, Errc::protocol_error);
}

TEST(Decoder, RejectsLongGarbageBeforeTheLineEnds) {
  // An HTTP request on the STOMP port: rejected before its first line is complete.
  auto step = decode("GET /index.html HTTP/1.1", Version::v1_2, {});
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().code, Errc::protocol_error);
  EXPECT_NE(step.error().detail.find("unknown command 'GET /index.h"), std::string::npos)
      << step.error().detail;
  // Binary garbage is quoted safely.
  step = decode("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\xaa\xbb\xcc"s, Version::v1_2, {});
  ASSERT_FALSE(step.has_value());
  EXPECT_NE(step.error().detail.find("'\\x16\\x03"), std::string::npos) << step.error().detail;
  // The longest command line with CR still waits.
  step = decode("UNSUBSCRIBE\r", Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_FALSE(step->frame);
}

// --- headers ----------------------------------------------------------------------------------

TEST(Decoder, KeepsHeadersInOrderAndFirstRepeatWins) {
  Frame f = decode_one("SEND\nb:1\na:2\nb:3\n\n\0"s);
  ASSERT_EQ(f.headers.size(), 3u);
  EXPECT_EQ(f.headers[0].first, "b");
  EXPECT_EQ(f.headers[1].first, "a");
  EXPECT_EQ(f.headers[2].second, "3");
  ASSERT_NE(f.header("b"), nullptr);
  EXPECT_EQ(*f.header("b"), "1");
  EXPECT_EQ(f.header("c"), nullptr);
}

TEST(Decoder, KeepsValuesVerbatimAndSplitsAtTheFirstColon) {
  for (Version v : kVersions) {
    Frame f = decode_one("MESSAGE\n k : v \nurl:http://x:80/\nempty:\n:no-name\n\n\0"s, v);
    ASSERT_EQ(f.headers.size(), 4u);
    EXPECT_EQ(f.headers[0], std::make_pair(" k "s, " v "s));
    EXPECT_EQ(f.headers[1], std::make_pair("url"s, "http://x:80/"s));
    EXPECT_EQ(f.headers[2], std::make_pair("empty"s, ""s));
    EXPECT_EQ(f.headers[3], std::make_pair(""s, "no-name"s));
  }
}

TEST(Decoder, AcceptsCrLfLineEndings) {
  for (Version v : kVersions) {
    Frame f = decode_one("SEND\r\ndestination:/queue/a\r\nx:y\r\n\r\nhi\0"s, v);
    EXPECT_EQ(f.command, Command::send);
    ASSERT_EQ(f.headers.size(), 2u);
    EXPECT_EQ(f.headers[0].second, "/queue/a");
    EXPECT_EQ(f.headers[1].second, "y");
    EXPECT_EQ(f.body, "hi");
  }
  // Mixed endings are fine too; only one CR before the LF belongs to the EOL.
  Frame f = decode_one("SEND\nx:y\r\r\n\r\n\0"s, Version::v1_1);
  EXPECT_EQ(f.headers[0].second, "y\r");
}

TEST(Decoder, RejectsHeaderLineWithoutColon) {
  Error e = decode_error("SEND\nok:1\nno-colon-here\n\n\0"s);
  EXPECT_EQ(e.code, Errc::protocol_error);
  EXPECT_NE(e.detail.find("header line without a colon at offset 10"), std::string::npos)
      << e.detail;
  // Reported as soon as the line is complete, without waiting for the body.
  auto step = decode("SEND\nbad\n", Version::v1_2, {});
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().code, Errc::protocol_error);
}

TEST(Decoder, UnescapesHeadersPerVersion) {
  const std::string wire = "MESSAGE\na\\cb:c\\nd\\\\e\n\n\0"s;
  Frame f11 = decode_one(wire, Version::v1_1);
  EXPECT_EQ(f11.headers[0], std::make_pair("a:b"s, "c\nd\\e"s));
  Frame f12 = decode_one(wire, Version::v1_2);
  EXPECT_EQ(f12.headers[0], std::make_pair("a:b"s, "c\nd\\e"s));
  Frame f10 = decode_one(wire, Version::v1_0);
  EXPECT_EQ(f10.headers[0], std::make_pair("a\\cb"s, "c\\nd\\\\e"s));

  const std::string cr = "MESSAGE\nx:1\\r2\n\n\0"s;
  EXPECT_EQ(decode_one(cr, Version::v1_2).headers[0].second, "1\r2");
  EXPECT_EQ(decode_one(cr, Version::v1_0).headers[0].second, "1\\r2");
  Error e = decode_error(cr, Version::v1_1);
  EXPECT_EQ(e.code, Errc::protocol_error);
  EXPECT_NE(e.detail.find("undefined escape sequence '\\r' at offset 11"), std::string::npos)
      << e.detail;
}

TEST(Decoder, RejectsUndefinedEscapes) {
  for (Version v : {Version::v1_1, Version::v1_2}) {
    for (std::string wire : {"SEND\nx:a\\tb\n\n\0"s, "SEND\nx:a\\\n\n\0"s, "SEND\nx\\y:1\n\n\0"s,
                             "SEND\nx:\\C\n\n\0"s}) {
      Error e = decode_error(wire, v);
      EXPECT_EQ(e.code, Errc::protocol_error) << wire;
      EXPECT_NE(e.detail.find("undefined escape sequence"), std::string::npos) << e.detail;
      EXPECT_NE(e.detail.find("at offset "), std::string::npos) << e.detail;
    }
  }
  // 1.0 has no escapes: the bytes are the value.
  EXPECT_EQ(decode_one("SEND\nx:a\\tb\n\n\0"s, Version::v1_0).headers[0].second, "a\\tb");
  // The offset points at the backslash.
  EXPECT_NE(decode_error("SEND\nx:a\\tb\n\n\0"s).detail.find("at offset 8"), std::string::npos);
}

TEST(Decoder, DoesNotUnescapeConnectStompOrConnected) {
  for (Version v : kVersions) {
    for (const char* cmd : {"CONNECT", "STOMP", "CONNECTED"}) {
      Frame f = decode_one(std::string(cmd) + "\npasscode:a\\tb\\c\n\n\0"s, v);
      EXPECT_EQ(f.headers[0].second, "a\\tb\\c") << cmd;
    }
  }
}

TEST(Decoder, LimitsHeaderCount) {
  DecoderLimits limits;
  limits.max_headers = 3;
  EXPECT_TRUE(decode("SEND\na:1\nb:2\nc:3\n\n\0"s, Version::v1_2, limits).has_value());
  Error e = decode_error("SEND\na:1\nb:2\nc:3\nd:4\n\n\0"s, Version::v1_2, limits);
  EXPECT_EQ(e.code, Errc::limit_exceeded);
  EXPECT_NE(e.detail.find("at offset 17"), std::string::npos) << e.detail;
  // Rejected as soon as the extra line has arrived.
  auto step = decode("SEND\na:1\nb:2\nc:3\nd:4\n", Version::v1_2, limits);
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().code, Errc::limit_exceeded);
}

// --- body -------------------------------------------------------------------------------------

TEST(Decoder, BodyRunsToFirstNulWithoutContentLength) {
  auto step = decode("SEND\n\nab\0cd\0"s, Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  ASSERT_TRUE(step->frame);
  EXPECT_EQ(step->frame->body, "ab");
  EXPECT_EQ(step->consumed, 9u);
}

TEST(Decoder, ContentLengthBodyMayHoldNuls) {
  std::string body = "\0\0binary\0\xff\x01\n\n\0"s;
  std::string wire = "SEND\ncontent-length:" + std::to_string(body.size()) + "\n\n" + body + '\0';
  for (Version v : kVersions) {
    Frame f = decode_one(wire, v);
    EXPECT_EQ(f.body, body);
    EXPECT_EQ(*f.header("content-length"), std::to_string(body.size()));
  }
  // The first content-length wins.
  Frame f = decode_one("SEND\ncontent-length:2\ncontent-length:9\n\n\0\0\0"s);
  EXPECT_EQ(f.body, "\0\0"s);
}

TEST(Decoder, RejectsMissingNulAfterContentLengthBody) {
  Error e = decode_error("SEND\ncontent-length:2\n\nabc\0"s);
  EXPECT_EQ(e.code, Errc::protocol_error);
  EXPECT_NE(e.detail.find("missing NUL after content-length body at offset 25"),
            std::string::npos)
      << e.detail;
}

TEST(Decoder, RejectsInvalidContentLength) {
  for (const char* value : {"", "abc", "-1", "+1", " 1", "1 ", "0x10", "1.5"}) {
    Error e = decode_error("SEND\ncontent-length:"s + value + "\n\n\0"s);
    EXPECT_EQ(e.code, Errc::protocol_error) << value;
    EXPECT_NE(e.detail.find("invalid content-length value"), std::string::npos) << e.detail;
    EXPECT_NE(e.detail.find("at offset 20"), std::string::npos) << e.detail;
  }
  // Leading zeros are digits.
  EXPECT_EQ(decode_one("SEND\ncontent-length:002\n\nab\0"s).body, "ab");
}

TEST(Decoder, RejectsOversizedFramesEarly) {
  DecoderLimits limits;
  limits.max_frame_bytes = 64;

  // A declared length that cannot fit is rejected before any of the body arrives, including
  // values that overflow size_t.
  for (const char* length : {"1073741824", "99999999999999999999999999"}) {
    auto step = decode("SEND\ncontent-length:"s + length + "\n\n", Version::v1_2, limits);
    ASSERT_FALSE(step.has_value()) << length;
    EXPECT_EQ(step.error().code, Errc::limit_exceeded);
    EXPECT_NE(step.error().detail.find("content-length"), std::string::npos);
  }
  // Headers that do not end within the limit.
  auto step = decode("SEND\nx:" + std::string(70, 'y'), Version::v1_2, limits);
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().code, Errc::limit_exceeded);
  // A body without content-length whose NUL has not come within the limit.
  step = decode("SEND\n\n" + std::string(60, 'b'), Version::v1_2, limits);
  ASSERT_FALSE(step.has_value());
  EXPECT_EQ(step.error().code, Errc::limit_exceeded);

  // Exactly at the limit fits; one more byte does not.
  std::string at_limit = "SEND\n\n" + std::string(64 - 7, 'b') + '\0';
  ASSERT_EQ(at_limit.size(), 64u);
  EXPECT_EQ(decode_all(at_limit, Version::v1_2, limits).frames.size(), 1u);
  EXPECT_EQ(decode_all(at_limit, Version::v1_2, limits).leftover, 0u);
  EXPECT_EQ(decode_bytewise(at_limit, Version::v1_2, limits).frames.size(), 1u);
  std::string over = "SEND\n\n" + std::string(64 - 6, 'b') + '\0';
  EXPECT_EQ(decode_error(over, Version::v1_2, limits).code, Errc::limit_exceeded);
  EXPECT_TRUE(decode_bytewise(over, Version::v1_2, limits).error);

  std::string cl_fits = "SEND\ncontent-length:39\n\n" + std::string(39, 'b') + '\0';
  ASSERT_EQ(cl_fits.size(), 64u);
  EXPECT_EQ(decode_all(cl_fits, Version::v1_2, limits).frames.size(), 1u);
  std::string cl_over = "SEND\ncontent-length:40\n\n" + std::string(40, 'b') + '\0';
  EXPECT_EQ(decode_error(cl_over, Version::v1_2, limits).code, Errc::limit_exceeded);

  // Heart-beats before a frame do not count against it.
  EXPECT_EQ(decode_all(std::string(100, '\n') + at_limit, Version::v1_2, limits).frames.size(),
            1u);
}

// --- incremental decoding ---------------------------------------------------------------------

TEST(Decoder, SkipsHeartBeats) {
  for (std::string_view beats : {"\n", "\r\n", "\n\n\r\n\n"}) {
    auto step = decode(beats, Version::v1_2, {});
    ASSERT_TRUE(step.has_value());
    EXPECT_FALSE(step->frame);
    EXPECT_EQ(step->consumed, beats.size());
    EXPECT_EQ(step->need_at_least, 1u);
  }
  // A lone CR may be the first half of a heart-beat: nothing consumed yet.
  auto step = decode("\n\r", Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_FALSE(step->frame);
  EXPECT_EQ(step->consumed, 1u);
  EXPECT_EQ(step->need_at_least, 2u);

  step = decode(std::string_view{}, Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_EQ(step->consumed, 0u);
  EXPECT_EQ(step->need_at_least, 1u);

  step = decode("\r\n\nSEND\n\n\0\n"s, Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  ASSERT_TRUE(step->frame);
  EXPECT_EQ(step->consumed, 10u);  // the trailing EOL is the next call's heart-beat
}

TEST(Decoder, NeedMoreReportsHeartBeatsAndAUsefulHint) {
  // Heart-beats are consumed even though the frame after them is incomplete.
  auto step = decode("\n\nSEN", Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_FALSE(step->frame);
  EXPECT_EQ(step->consumed, 2u);
  EXPECT_EQ(step->need_at_least, 4u);

  // With a content-length the hint is the whole frame: header end + length + NUL.
  const std::string head = "SEND\ncontent-length:1000\n\n";
  step = decode("\n" + head + "abc", Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_FALSE(step->frame);
  EXPECT_EQ(step->consumed, 1u);
  EXPECT_EQ(step->need_at_least, head.size() + 1000 + 1);

  // Body complete but the NUL missing.
  step = decode("SEND\ncontent-length:3\n\nabc", Version::v1_2, {});
  ASSERT_TRUE(step.has_value());
  EXPECT_FALSE(step->frame);
  EXPECT_EQ(step->need_at_least, 27u);
}

TEST(Decoder, SameFramesWhateverTheSplit) {
  const std::string stream = all_valid_frames();
  for (Version v : kVersions) {
    Decoded whole = decode_all(stream, v);
    ASSERT_FALSE(whole.error) << whole.error->to_string();
    // The list above, plus the MESSAGE that 1.0 and 1.1 reject... none: every frame is valid in
    // every version (the escapes used are defined in 1.1).
    EXPECT_EQ(whole.frames.size(), valid_frames().size());
    EXPECT_EQ(whole.leftover, 0u);

    Decoded bytewise = decode_bytewise(stream, v);
    EXPECT_FALSE(bytewise.error);
    EXPECT_EQ(bytewise.frames, whole.frames);
    EXPECT_EQ(bytewise.leftover, 0u);

    std::mt19937 rng(12345);
    for (int round = 0; round < 200; ++round) {
      std::uniform_int_distribution<std::size_t> pick(0, stream.size());
      std::vector<std::size_t> cuts(1 + round % 20);
      for (auto& c : cuts) c = pick(rng);
      std::sort(cuts.begin(), cuts.end());
      Decoded split = decode_in_chunks(stream, cuts, v);
      ASSERT_FALSE(split.error) << split.error->to_string();
      ASSERT_EQ(split.frames, whole.frames) << "round " << round;
    }
  }
}

TEST(Decoder, EachTestFrameDecodesAloneByteByByte) {
  for (Version v : kVersions) {
    for (const auto& wire : valid_frames()) {
      Decoded whole = decode_all(wire, v);
      ASSERT_FALSE(whole.error) << wire;
      ASSERT_EQ(whole.frames.size(), 1u) << wire;
      Decoded bytewise = decode_bytewise(wire, v);
      EXPECT_EQ(bytewise.frames, whole.frames) << wire;
      EXPECT_EQ(bytewise.leftover, 0u);
    }
  }
}

TEST(Decoder, ErrorsAreTheSameWhateverTheSplit) {
  DecoderLimits limits;
  limits.max_frame_bytes = 80;
  limits.max_headers = 4;
  const std::vector<std::string> bad = {
      "SEND\n\nok\0BOGUS\n\n\0"s,
      "SEND\nno colon\n\n\0"s,
      "SEND\nx:\\t\n\n\0"s,
      "SEND\ncontent-length:x\n\n\0"s,
      "SEND\ncontent-length:1\n\nab\0"s,
      "SEND\na:1\nb:2\nc:3\nd:4\ne:5\n\n\0"s,
      "SEND\ncontent-length:100\n\n"s,
      "SEND\n\n" + std::string(100, 'x'),
      "SEND\nx:" + std::string(100, 'x'),
  };
  for (const auto& wire : bad) {
    Decoded whole = decode_all(wire, Version::v1_2, limits);
    ASSERT_TRUE(whole.error) << wire;
    Decoded bytewise = decode_bytewise(wire, Version::v1_2, limits);
    ASSERT_TRUE(bytewise.error) << wire;
    EXPECT_EQ(bytewise.error->code, whole.error->code) << wire;
    EXPECT_EQ(bytewise.frames, whole.frames) << wire;
  }
}

// --- round trips ------------------------------------------------------------------------------

TEST(Decoder, DecodesWhatTheEncoderWrites) {
  const Headers tricky = {{"destination", "/queue/a"},
                          {"colon:name", "new\nline"},
                          {"back\\slash", "carriage\rreturn"},
                          {"", ""},
                          {"repeat", "1"},
                          {"repeat", "2"}};
  for (Version v : {Version::v1_1, Version::v1_2}) {
    for (Command c : kCommands) {
      if (c == Command::connect || c == Command::stomp || c == Command::connected) continue;
      for (const std::string& body : {""s, "text"s, "\0with\0nuls\0"s}) {
        std::string wire;
        encode(c, tricky, body, v, wire);
        Frame f = decode_one(wire, v);
        EXPECT_EQ(f.command, c);
        EXPECT_EQ(f.body, body);
        Headers expected = tricky;
        if (!body.empty()) expected.emplace_back("content-length", std::to_string(body.size()));
        EXPECT_EQ(f.headers, expected) << to_string(c);
        EXPECT_EQ(decode_bytewise(wire, v).frames.at(0), f);
      }
    }
  }
}

TEST(Decoder, PeekHeaderFindsTheReceiptOfAFrameItRefuses) {
  DecoderLimits limits;
  limits.max_frame_bytes = 64;
  const std::string big = "\nSEND\ndestination:/queue/a\nreceipt:r\\c1\ncontent-length:1000\n\nxx";
  ASSERT_FALSE(decode(big, Version::v1_2, limits).has_value());
  EXPECT_EQ(peek_header(big, "receipt", Version::v1_2), "r:1");
  EXPECT_EQ(peek_header(big, "receipt", Version::v1_0), "r\\c1");  // 1.0 does not escape
  // Only complete lines count; a line that is no header ends the search.
  EXPECT_EQ(peek_header("SEND\nreceipt:r", "receipt", Version::v1_2), std::nullopt);
  EXPECT_EQ(peek_header("SEND\nbad line\nreceipt:r\n", "receipt", Version::v1_2), std::nullopt);
  EXPECT_EQ(peek_header("SEND\na:1\n\nreceipt:r\n", "receipt", Version::v1_2), std::nullopt);
  EXPECT_EQ(peek_header("GARBAGE\nreceipt:r\n", "receipt", Version::v1_2), std::nullopt);
}

}  // namespace
}  // namespace carrier::stomp::codec
