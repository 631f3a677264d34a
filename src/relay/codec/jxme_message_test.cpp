#include "relay/codec/jxme_message.hpp"

#include <gtest/gtest.h>

#include "relay/codec/seed_listings.hpp"

namespace carrier::relay::codec {
namespace {

const std::string kNsNames[] = {"", "jxta"};

Message message_of(const seed::Listing& l) {
  Message m;
  m.namespaces = l.namespaces;
  for (const auto& r : l.rows) {
    m.add(r.ns < 2 ? kNsNames[r.ns] : l.namespaces[r.ns - 2], r.name, r.content);
  }
  return m;
}

TEST(JxmeMessage, EverySeedListingDecodesAndReEncodesToItsBytes) {
  for (const auto& l : seed::listings()) {
    SCOPED_TRACE(l.number);
    const std::string bytes = seed::bytes_of(l);
    auto d = decode_one(bytes, Limits{});
    ASSERT_TRUE(d.has_value()) << d.error().detail;
    EXPECT_EQ(d->consumed, bytes.size());
    EXPECT_EQ(d->message, message_of(l));
    std::string out;
    ASSERT_TRUE(encode(message_of(l), out).has_value());
    EXPECT_EQ(out, bytes);
  }
}

TEST(JxmeMessage, Listing14HasTheRecordsNamespaceAsIdThree) {
  const auto l = seed::listings()[11];
  ASSERT_EQ(l.number, 14);
  auto d = decode_one(seed::bytes_of(l), Limits{});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->message.find("records", "fileReference"), "3");
  EXPECT_EQ(d->message.find("", "message"), "Hello");
  EXPECT_EQ(d->message.find("proxy", "request"), "send");
  EXPECT_EQ(d->message.find("jxta", "EndpointSourceAddress"), seed::kPeerAddress);
}

TEST(JxmeMessage, SplitAtEveryByteAsksForTheRestOrFails) {
  const std::string bytes = seed::bytes_of(seed::listings()[0]);
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    auto d = decode_one(std::string_view(bytes).substr(0, n), Limits{});
    ASSERT_FALSE(d.has_value()) << n;
    EXPECT_EQ(d.error().code, Errc::protocol_error);
  }
}

TEST(JxmeMessage, MimeTypeAndEncodingRoundTrip) {
  Message m;
  m.elements.push_back(Element{"app", "body", std::string("\0\xff", 2), "text/plain", "binary"});
  m.add("", "plain", "x");
  std::string out;
  ASSERT_TRUE(encode(m, out).has_value());
  auto d = decode_one(out, Limits{});
  ASSERT_TRUE(d.has_value()) << d.error().detail;
  m.namespaces = {"app"};  // declared by the encoder in order of use
  EXPECT_EQ(d->message, m);
  EXPECT_EQ(out[out.find("jxel") + 5], char(kHasMimeType | kHasEncoding));
}

TEST(JxmeMessage, SeveralMessagesBackToBack) {
  std::string body;
  for (const auto& l : seed::listings()) body += seed::bytes_of(l);
  auto all = decode_all(body, Limits{});
  ASSERT_TRUE(all.has_value()) << all.error().detail;
  EXPECT_EQ(all->size(), seed::listings().size());
  auto none = decode_all("", Limits{});
  ASSERT_TRUE(none.has_value());
  EXPECT_TRUE(none->empty());
}

// --- refusals ---------------------------------------------------------------------------------

std::string listing1() { return seed::bytes_of(seed::listings()[0]); }

void expect_refused(const std::string& bytes, Errc code, std::string_view words, const Limits& limits = {}) {
  auto d = decode_all(bytes, limits);
  ASSERT_FALSE(d.has_value());
  EXPECT_EQ(d.error().code, code);
  EXPECT_NE(d.error().detail.find(words), std::string::npos) << d.error().detail;
}

TEST(JxmeMessageRefusal, BadSignature) {
  auto b = listing1();
  b[0] = 'X';
  expect_refused(b, Errc::protocol_error, "message signature");
}

TEST(JxmeMessageRefusal, BadElementSignature) {
  auto b = listing1();
  b[b.find("jxel") + 3] = 'X';
  expect_refused(b, Errc::protocol_error, "element signature");
}

TEST(JxmeMessageRefusal, BadVersion) {
  auto b = listing1();
  b[4] = 1;
  expect_refused(b, Errc::protocol_error, "version");
}

TEST(JxmeMessageRefusal, NamespaceCountPastTheEnd) {
  auto b = listing1();
  b[6] = 9;  // nine namespaces declared, one given
  expect_refused(b, Errc::protocol_error, "");
}

TEST(JxmeMessageRefusal, ElementCountPastTheEnd) {
  auto b = listing1();
  b[4 + 1 + 2 + 2 + 5 + 1] = 8;  // eight elements, seven given
  expect_refused(b, Errc::protocol_error, "element signature");
}

TEST(JxmeMessageRefusal, UndeclaredNamespaceId) {
  auto b = listing1();
  b[b.find("jxel") + 4] = 3;  // only 0, 1 and 2 exist
  expect_refused(b, Errc::protocol_error, "not declared");
}

TEST(JxmeMessageRefusal, NamespaceDeclaredEmptyJxtaOrTwice) {
  // Each would give one element two spellings on the wire (found by fuzz/relay_codec).
  auto with_namespaces = [](std::initializer_list<std::string_view> names) {
    std::string b = "jxmg";
    b.push_back(0);
    b.push_back(0);
    b.push_back(static_cast<char>(names.size()));
    for (auto n : names) {
      b.push_back(0);
      b.push_back(static_cast<char>(n.size()));
      b.append(n);
    }
    b.append(std::string("\0\0", 2));  // no elements
    return b;
  };
  ASSERT_TRUE(decode_all(with_namespaces({"relay", "proxy"}), Limits{}).has_value());
  expect_refused(with_namespaces({""}), Errc::protocol_error, "declared twice");
  expect_refused(with_namespaces({"jxta"}), Errc::protocol_error, "declared twice");
  expect_refused(with_namespaces({"relay", "relay"}), Errc::protocol_error, "declared twice");
}

TEST(JxmeMessageRefusal, UnknownFlagBits) {
  auto b = listing1();
  b[b.find("jxel") + 5] = 0x04;
  expect_refused(b, Errc::protocol_error, "flags");
}

TEST(JxmeMessageRefusal, NameLengthPastTheEnd) {
  auto b = listing1();
  const auto e = b.find("jxel");
  b[e + 6] = 0x7f;
  expect_refused(b, Errc::protocol_error, "element name");
}

TEST(JxmeMessageRefusal, ContentLengthPastTheEnd) {
  auto b = listing1();
  const auto c = b.find("request") + 7;  // the first content length
  b[c] = 0x10;
  expect_refused(b, Errc::protocol_error, "element content");
}

TEST(JxmeMessageRefusal, LengthBeyondTheConfiguredLimit) {
  auto b = listing1();
  Limits small;
  small.max_message_bytes = 64;
  expect_refused(b, Errc::limit_exceeded, "longer than 64", small);
  small = Limits{};
  small.max_elements = 3;
  expect_refused(b, Errc::limit_exceeded, "element count", small);
  small = Limits{};
  small.max_namespaces = 0;
  expect_refused(b, Errc::limit_exceeded, "namespace count", small);
}

TEST(JxmeMessageRefusal, TrailingBytes) {
  auto b = listing1() + "jx";
  expect_refused(b, Errc::protocol_error, "message 2");
}

TEST(JxmeMessageEncode, RefusesWhatDoesNotFit) {
  Message m;
  m.add("", std::string(70000, 'n'), "");
  std::string out = "kept";
  auto st = encode(m, out);
  ASSERT_FALSE(st.has_value());
  EXPECT_EQ(out, "kept");
}

}  // namespace
}  // namespace carrier::relay::codec
