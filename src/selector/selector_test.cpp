#include "selector/selector.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "selector/evaluator.hpp"
#include "selector/lexer.hpp"

// Counts this thread's allocations, so a test can check that matches() makes none.
namespace {
thread_local std::size_t t_allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  ++t_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// g++ 12 flags free() inside a replaced operator delete as a new/free mismatch; it is the pair.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace carrier::selector {

using model::Message;
using model::MessageId;
using model::MessageIdGenerator;
using model::Properties;

namespace {

Message message_with(Properties properties = {}) {
  Message m;
  m.properties = std::move(properties);
  return m;
}

// The three-valued result of `text` on `m`; a parse error fails the test.
Truth eval(std::string_view text, const Message& m = {}) {
  auto selector = parse(text);
  EXPECT_TRUE(selector.has_value()) << text << ": "
                                    << (selector ? "" : selector.error().detail);
  if (!selector) return Truth::unknown;
  const Truth t = evaluate((*selector)->tree(), m);
  EXPECT_EQ(matches(**selector, m), t == Truth::yes);
  return t;
}

std::string error_of(std::string_view text, const Limits& limits = {}) {
  auto selector = parse(text, limits);
  if (selector) return "parsed: " + to_text((*selector)->tree());
  return selector.error().detail;
}

Errc code_of(std::string_view text, const Limits& limits = {}) {
  auto selector = parse(text, limits);
  EXPECT_FALSE(selector.has_value()) << text;
  return selector ? Errc::invalid_argument : selector.error().code;
}

std::string canonical(std::string_view text) {
  auto selector = parse(text);
  if (!selector) return "error: " + selector.error().detail;
  return to_text((*selector)->tree());
}

constexpr Truth Y = Truth::yes;
constexpr Truth N = Truth::no;
constexpr Truth U = Truth::unknown;

// --- literals and identifiers -------------------------------------------------------------------

TEST(SelectorLiterals, StringsWithDoubledQuotes) {
  const auto m = message_with({{"s", "it's"}, {"e", ""}});
  EXPECT_EQ(eval("s = 'it''s'", m), Y);
  EXPECT_EQ(eval("s = 'its'", m), N);
  EXPECT_EQ(eval("e = ''", m), Y);
  EXPECT_EQ(eval("'''' = ''''"), Y);
}

TEST(SelectorLiterals, ExactAndApproximateNumerics) {
  EXPECT_EQ(eval("57 = 57"), Y);
  EXPECT_EQ(eval("-957 < +62"), Y);
  EXPECT_EQ(eval("1.5e3 = 1500"), Y);
  EXPECT_EQ(eval("7E3 = 7000"), Y);
  EXPECT_EQ(eval("-57.9E2 = -5790"), Y);
  EXPECT_EQ(eval("7. = 7"), Y);
  EXPECT_EQ(eval(".5 = 0.5"), Y);
  EXPECT_EQ(eval("1e-3 = 0.001"), Y);
  EXPECT_EQ(eval("9223372036854775807 > 0"), Y);
  EXPECT_EQ(eval("-9223372036854775808 < 0"), Y);
  EXPECT_EQ(eval("-9223372036854775808 - 1 = 9223372036854775807"), Y);  // wraps, as Java
}

TEST(SelectorLiterals, BooleansAndKeywordsAreCaseInsensitive) {
  EXPECT_EQ(eval("TRUE"), Y);
  EXPECT_EQ(eval("true"), Y);
  EXPECT_EQ(eval("False"), N);
  EXPECT_EQ(eval("true and not false"), Y);
  EXPECT_EQ(eval("2 between 1 And 3"), Y);
  EXPECT_EQ(eval("x is null"), Y);
  EXPECT_EQ(eval("x Is Not Null"), N);
}

TEST(SelectorIdentifiers, AreCaseSensitive) {
  const auto m = message_with({{"Color", "red"}});
  EXPECT_EQ(eval("Color = 'red'", m), Y);
  EXPECT_EQ(eval("color = 'red'", m), U);
  EXPECT_EQ(eval("color IS NULL", m), Y);
}

TEST(SelectorIdentifiers, JavaIdentifierCharacters) {
  const auto m = message_with({{"_x$1", "a"}, {"caf\xc3\xa9", "b"}});
  EXPECT_EQ(eval("_x$1 = 'a'", m), Y);
  EXPECT_EQ(eval("caf\xc3\xa9 = 'b'", m), Y);
}

TEST(SelectorIdentifiers, KeywordsAreNotIdentifiers) {
  EXPECT_EQ(error_of("and = 1"), "selector: expected an expression, found AND at position 0");
  EXPECT_EQ(error_of("x = null"), "selector: expected an expression, found NULL at position 4");
}

// --- comparisons and types ----------------------------------------------------------------------

TEST(SelectorComparison, EveryOperatorOnNumbers) {
  EXPECT_EQ(eval("1 = 1"), Y);
  EXPECT_EQ(eval("1 = 2"), N);
  EXPECT_EQ(eval("1 <> 2"), Y);
  EXPECT_EQ(eval("1 <> 1"), N);
  EXPECT_EQ(eval("1 < 2"), Y);
  EXPECT_EQ(eval("2 < 2"), N);
  EXPECT_EQ(eval("2 <= 2"), Y);
  EXPECT_EQ(eval("3 <= 2"), N);
  EXPECT_EQ(eval("3 > 2"), Y);
  EXPECT_EQ(eval("2 > 2"), N);
  EXPECT_EQ(eval("2 >= 2"), Y);
  EXPECT_EQ(eval("1 >= 2"), N);
}

TEST(SelectorComparison, ExactAndApproximatePromote) {
  EXPECT_EQ(eval("1 = 1.0"), Y);
  EXPECT_EQ(eval("1 < 1.5"), Y);
  EXPECT_EQ(eval("2.5 > 2"), Y);
  EXPECT_EQ(eval("7 / 2 = 3"), Y);      // long division truncates
  EXPECT_EQ(eval("-7 / 2 = -3"), Y);    // toward zero
  EXPECT_EQ(eval("7 / 2.0 = 3.5"), Y);  // one double makes it double
  EXPECT_EQ(eval("7.0 / 2 = 3.5"), Y);
}

TEST(SelectorComparison, StringsOnlyEqualAndNotEqual) {
  const auto m = message_with({{"s", "abc"}});
  EXPECT_EQ(eval("s = 'abc'", m), Y);
  EXPECT_EQ(eval("s <> 'abc'", m), N);
  EXPECT_EQ(eval("s <> 'abd'", m), Y);
  EXPECT_EQ(eval("'abc' = 'ABC'"), N);
  EXPECT_EQ(error_of("'a' < 'b'"), "selector: expected a numeric expression at position 0");
  EXPECT_EQ(error_of("s >= 'b'"), "selector: expected a numeric expression at position 5");
  EXPECT_EQ(error_of("JMSType > 1"), "selector: expected a numeric expression at position 0");
  // Two properties that are not numbers: no order.
  EXPECT_EQ(eval("s < t", message_with({{"s", "a"}, {"t", "b"}})), U);
}

TEST(SelectorComparison, BooleansOnlyEqualAndNotEqual) {
  EXPECT_EQ(eval("TRUE = TRUE"), Y);
  EXPECT_EQ(eval("TRUE <> FALSE"), Y);
  EXPECT_EQ(eval("(1 < 2) = TRUE"), Y);
  EXPECT_EQ(error_of("TRUE < FALSE"), "selector: expected a numeric expression at position 0");
}

TEST(SelectorComparison, IncompatibleTypesAreUnknown) {
  const auto m = message_with({{"color", "red"}});
  EXPECT_EQ(eval("color = 5", m), U);
  // UNKNOWN, not FALSE (JMS 1.1 says false): NOT of a mismatch must not select everything.
  EXPECT_EQ(eval("NOT (color = 5)", m), U);
  EXPECT_EQ(eval("color = TRUE", m), U);
  EXPECT_EQ(eval("'1' = 1"), U);  // a string literal is not a property: no conversion
  EXPECT_EQ(eval("'true' = TRUE"), U);
  EXPECT_EQ(eval("1 = TRUE"), U);
  EXPECT_EQ(eval("JMSPriority = '4'"), U);
  EXPECT_EQ(eval("JMSDeliveryMode = 1"), U);
}

TEST(SelectorComparison, NullIsUnknown) {
  EXPECT_EQ(eval("x = 1"), U);
  EXPECT_EQ(eval("x <> 1"), U);
  EXPECT_EQ(eval("x < 1"), U);
  EXPECT_EQ(eval("x = 'a'"), U);
  EXPECT_EQ(eval("x = TRUE"), U);
  EXPECT_EQ(eval("x = y"), U);
  EXPECT_EQ(eval("NOT (x = 1)"), U);
}

TEST(SelectorComparison, ComparisonsDoNotChain) {
  EXPECT_EQ(error_of("1 = 1 = TRUE"), "selector: unexpected '=' at position 6");
}

// --- three-valued logic ------------------------------------------------------------------------

// t, f and u are TRUE, FALSE and UNKNOWN (a missing property) as operands.
const Message kTruthMessage = message_with({{"t", "true"}, {"f", "false"}});

TEST(SelectorLogic, PropertiesAsTruthValues) {
  EXPECT_EQ(eval("t", kTruthMessage), Y);
  EXPECT_EQ(eval("f", kTruthMessage), N);
  EXPECT_EQ(eval("u", kTruthMessage), U);
  EXPECT_EQ(eval("flag", message_with({{"flag", "TRUE"}})), Y);
  EXPECT_EQ(eval("flag", message_with({{"flag", "yes"}})), U);
  EXPECT_EQ(eval("flag", message_with({{"flag", "1"}})), U);
}

TEST(SelectorLogic, AndTruthTable) {
  const std::vector<std::tuple<const char*, Truth>> table = {
      {"t AND t", Y}, {"t AND f", N}, {"t AND u", U},  //
      {"f AND t", N}, {"f AND f", N}, {"f AND u", N},  //
      {"u AND t", U}, {"u AND f", N}, {"u AND u", U},
  };
  for (const auto& [text, expected] : table) EXPECT_EQ(eval(text, kTruthMessage), expected) << text;
}

TEST(SelectorLogic, OrTruthTable) {
  const std::vector<std::tuple<const char*, Truth>> table = {
      {"t OR t", Y}, {"t OR f", Y}, {"t OR u", Y},  //
      {"f OR t", Y}, {"f OR f", N}, {"f OR u", U},  //
      {"u OR t", Y}, {"u OR f", U}, {"u OR u", U},
  };
  for (const auto& [text, expected] : table) EXPECT_EQ(eval(text, kTruthMessage), expected) << text;
}

TEST(SelectorLogic, NotTruthTable) {
  EXPECT_EQ(eval("NOT t", kTruthMessage), N);
  EXPECT_EQ(eval("NOT f", kTruthMessage), Y);
  EXPECT_EQ(eval("NOT u", kTruthMessage), U);
  EXPECT_EQ(eval("NOT NOT t", kTruthMessage), Y);
}

TEST(SelectorLogic, LongChainsAreFlat) {
  std::string text = "x = '0'";
  for (int i = 1; i < 1000; ++i) text += " OR x = '" + std::to_string(i) + "'";
  EXPECT_EQ(eval(text, message_with({{"x", "999"}})), Y);
  EXPECT_EQ(eval(text, message_with({{"x", "1000"}})), N);
  EXPECT_EQ(eval(text, message_with({})), U);
}

TEST(SelectorLogic, OperandsMustBeBoolean) {
  EXPECT_EQ(error_of("NOT 5"), "selector: expected a boolean expression at position 4");
  EXPECT_EQ(error_of("a AND 'x'"), "selector: expected a boolean expression at position 6");
  EXPECT_EQ(error_of("1 + 2 OR a"), "selector: expected a boolean expression at position 0");
  EXPECT_EQ(error_of("5"), "selector: expected a boolean expression at position 0");
  EXPECT_EQ(error_of("JMSPriority"), "selector: expected a boolean expression at position 0");
  EXPECT_EQ(error_of("(JMSType)"), "selector: expected a boolean expression at position 0");
}

// --- precedence ---------------------------------------------------------------------------------

TEST(SelectorPrecedence, AndBeforeOrNotBeforeAnd) {
  EXPECT_EQ(eval("TRUE OR TRUE AND FALSE"), Y);
  EXPECT_EQ(eval("(TRUE OR TRUE) AND FALSE"), N);
  EXPECT_EQ(eval("NOT FALSE AND FALSE"), N);
  EXPECT_EQ(eval("NOT (FALSE AND FALSE)"), Y);
  EXPECT_EQ(eval("NOT 1 = 2"), Y);  // NOT (1 = 2)
  EXPECT_EQ(canonical("a OR b AND c"), "a OR (b AND c)");
  EXPECT_EQ(canonical("a AND b OR c AND d"), "(a AND b) OR (c AND d)");
  EXPECT_EQ(canonical("NOT a AND b"), "(NOT a) AND b");
  EXPECT_EQ(canonical("NOT a = 1 OR b"), "(NOT (a = 1)) OR b");
}

TEST(SelectorPrecedence, Arithmetic) {
  EXPECT_EQ(eval("1 + 2 * 3 = 7"), Y);
  EXPECT_EQ(eval("(1 + 2) * 3 = 9"), Y);
  EXPECT_EQ(eval("10 - 2 - 3 = 5"), Y);   // left to right
  EXPECT_EQ(eval("12 / 2 / 3 = 2"), Y);   // left to right
  EXPECT_EQ(eval("2 * 3 + 4 * 5 = 26"), Y);
  EXPECT_EQ(eval("-2 * -3 = 6"), Y);
  EXPECT_EQ(eval("- (1 + 2) = -3"), Y);
  EXPECT_EQ(eval("+3 = 3"), Y);
  EXPECT_EQ(eval("1 + 2 BETWEEN 3 AND 3"), Y);
  EXPECT_EQ(canonical("a + b * c - d / e > 0"), "((a + (b * c)) - (d / e)) > 0");
  EXPECT_EQ(canonical("-a * b = 1"), "((-a) * b) = 1");
  EXPECT_EQ(canonical("- 5 = -5.5"), "-5 = -5.5");
}

// --- arithmetic ---------------------------------------------------------------------------------

TEST(SelectorArithmetic, Operators) {
  EXPECT_EQ(eval("2 + 3 = 5"), Y);
  EXPECT_EQ(eval("2 - 3 = -1"), Y);
  EXPECT_EQ(eval("2 * 3 = 6"), Y);
  EXPECT_EQ(eval("6 / 3 = 2"), Y);
  EXPECT_EQ(eval("1.5 + 1.5 = 3"), Y);
  EXPECT_EQ(eval("0.5 * 4 = 2"), Y);
  EXPECT_EQ(eval("-(-4) = 4"), Y);
}

TEST(SelectorArithmetic, OverflowWrapsLikeJava) {
  EXPECT_EQ(eval("9223372036854775807 + 1 = -9223372036854775808"), Y);
  EXPECT_EQ(eval("-9223372036854775808 / -1 = -9223372036854775808"), Y);
  EXPECT_EQ(eval("-(-9223372036854775808) = -9223372036854775808"), Y);
  EXPECT_EQ(eval("4611686018427387904 * 4 = 0"), Y);
}

TEST(SelectorArithmetic, DivisionByZeroIsUnknown) {
  EXPECT_EQ(eval("1 / 0 = 1"), U);
  EXPECT_EQ(eval("1 / 0 IS NULL"), Y);
  EXPECT_EQ(eval("1.0 / 0 > 0"), U);
  EXPECT_EQ(eval("1 / 0.0 < 0"), U);
  EXPECT_EQ(eval("x / 0 = 1", message_with({{"x", "5"}})), U);
  EXPECT_EQ(eval("NOT (1 / 0 = 1)"), U);
}

TEST(SelectorArithmetic, NullAndNonNumbersPropagate) {
  EXPECT_EQ(eval("x + 1 = 1"), U);
  EXPECT_EQ(eval("-x = 1"), U);
  EXPECT_EQ(eval("x + 1 IS NULL"), Y);
  EXPECT_EQ(eval("x + 1 = 1", message_with({{"x", "abc"}})), U);
  EXPECT_EQ(error_of("'a' + 1 = 1"), "selector: expected a numeric expression at position 0");
  EXPECT_EQ(error_of("1 * TRUE = 1"), "selector: expected a numeric expression at position 4");
  EXPECT_EQ(error_of("-'a' = 1"), "selector: expected a numeric expression at position 1");
  EXPECT_EQ(error_of("-JMSType = 1"), "selector: expected a numeric expression at position 1");
}

TEST(SelectorArithmetic, NaNNeverOrders) {
  // 1e308 * 10 is infinite; infinity minus itself is NaN.
  const char* nan = "(1e308 * 10 - 1e308 * 10)";
  EXPECT_EQ(eval(std::string(nan) + " = 0"), N);
  EXPECT_EQ(eval(std::string(nan) + " < 0"), N);
  EXPECT_EQ(eval(std::string(nan) + " >= 0"), N);
  EXPECT_EQ(eval(std::string(nan) + " <> 0"), Y);
}

// --- BETWEEN, IN, LIKE, IS NULL ------------------------------------------------------------------

TEST(SelectorBetween, InclusiveBoundsAndNot) {
  const auto m = message_with({{"age", "17"}});
  EXPECT_EQ(eval("age BETWEEN 15 AND 19", m), Y);
  EXPECT_EQ(eval("age BETWEEN 17 AND 17", m), Y);
  EXPECT_EQ(eval("age BETWEEN 18 AND 19", m), N);
  EXPECT_EQ(eval("age NOT BETWEEN 15 AND 19", m), N);
  EXPECT_EQ(eval("age NOT BETWEEN 18 AND 19", m), Y);
  EXPECT_EQ(eval("age BETWEEN 16.5 AND 17.5", m), Y);
  EXPECT_EQ(eval("age BETWEEN 10 + 5 AND 20 - 1 AND TRUE", m), Y);
  EXPECT_EQ(eval("NOT age BETWEEN 15 AND 19", m), N);
}

TEST(SelectorBetween, NullAndNonNumbersAreUnknown) {
  EXPECT_EQ(eval("age BETWEEN 15 AND 19"), U);
  EXPECT_EQ(eval("age NOT BETWEEN 15 AND 19"), U);
  const auto foo = message_with({{"age", "foo"}});
  EXPECT_EQ(eval("age BETWEEN 1 AND 10", foo), U);
  EXPECT_EQ(eval("age NOT BETWEEN 1 AND 10", foo), U);
  // One bound NULL: decided by the other when that one fails.
  const auto m = message_with({{"age", "17"}});
  EXPECT_EQ(eval("age BETWEEN 18 AND x", m), N);
  EXPECT_EQ(eval("age BETWEEN 15 AND x", m), U);
  EXPECT_EQ(eval("age NOT BETWEEN x AND 16", m), Y);
  EXPECT_EQ(error_of("age BETWEEN 'a' AND 'b'"),
                     "selector: expected a numeric expression at position 12");
  EXPECT_EQ(error_of("age BETWEEN 1 OR 2"), "selector: expected AND at position 14");
}

TEST(SelectorIn, StringSets) {
  const auto m = message_with({{"Country", "France"}, {"n", "1"}});
  EXPECT_EQ(eval("Country IN ('UK', 'US', 'France')", m), Y);
  EXPECT_EQ(eval("Country IN ('UK', 'US')", m), N);
  EXPECT_EQ(eval("Country NOT IN ('UK', 'US', 'France')", m), N);
  EXPECT_EQ(eval("Country NOT IN ('UK', 'US')", m), Y);
  EXPECT_EQ(eval("Country IN ('France')", m), Y);
  EXPECT_EQ(eval("Country IN ('france')", m), N);
  EXPECT_EQ(eval("n IN ('1', '2')", m), Y);
  EXPECT_EQ(eval("NOT Country IN ('UK')", m), Y);
  EXPECT_EQ(eval("JMSType IN ('a', 'b')", [] {
              Message t;
              t.type = "b";
              return t;
            }()),
            Y);
}

TEST(SelectorIn, NullIsUnknown) {
  EXPECT_EQ(eval("x IN ('a')"), U);
  EXPECT_EQ(eval("x NOT IN ('a')"), U);
}

TEST(SelectorIn, OnlyStringLiterals) {
  EXPECT_EQ(error_of("x IN ('a', 2)"), "selector: expected a string literal at position 11");
  EXPECT_EQ(error_of("x IN ()"), "selector: expected a string literal at position 6");
  EXPECT_EQ(error_of("x IN 'a'"), "selector: expected '(' at position 5");
  EXPECT_EQ(error_of("x IN ('a' 'b')"), "selector: expected ')' at position 10");
  EXPECT_EQ(error_of("JMSPriority IN ('4')"),
            "selector: expected a string expression at position 0");
}

TEST(SelectorLike, Wildcards) {
  const auto m = message_with({{"phone", "12993"}, {"word", "bulgaria"}});
  EXPECT_EQ(eval("phone LIKE '12%3'", m), Y);
  EXPECT_EQ(eval("phone LIKE '12%4'", m), N);
  EXPECT_EQ(eval("word LIKE 'l_se'", message_with({{"word", "lose"}})), Y);
  EXPECT_EQ(eval("word LIKE 'l_se'", message_with({{"word", "loose"}})), N);
  EXPECT_EQ(eval("word LIKE 'bulgaria'", m), Y);
  EXPECT_EQ(eval("word LIKE 'bul%'", m), Y);
  EXPECT_EQ(eval("word LIKE '%aria'", m), Y);
  EXPECT_EQ(eval("word LIKE '%lga%'", m), Y);
  EXPECT_EQ(eval("word LIKE '%'", m), Y);
  EXPECT_EQ(eval("word LIKE '%%'", m), Y);
  EXPECT_EQ(eval("word LIKE '________'", m), Y);
  EXPECT_EQ(eval("word LIKE '_______'", m), N);
  EXPECT_EQ(eval("word LIKE 'b%g%a'", m), Y);
  EXPECT_EQ(eval("word LIKE '%g_r%'", m), Y);
  EXPECT_EQ(eval("word LIKE '%g_a%'", m), N);
  EXPECT_EQ(eval("word LIKE '%g__r'", m), N);
  EXPECT_EQ(eval("word LIKE '%g%r_a'", m), Y);
  EXPECT_EQ(eval("word NOT LIKE 'bul%'", m), N);
  EXPECT_EQ(eval("word NOT LIKE 'x%'", m), Y);
  EXPECT_EQ(eval("NOT word LIKE 'x%'", m), Y);
}

TEST(SelectorLike, Escape) {
  const auto m = message_with({{"u", "_foo"}, {"p", "100%"}, {"b", "a\\b"}});
  EXPECT_EQ(eval("u LIKE '\\_%' ESCAPE '\\'", m), Y);
  EXPECT_EQ(eval("u LIKE '\\_%' ESCAPE '\\'", message_with({{"u", "xfoo"}})), N);
  EXPECT_EQ(eval("p LIKE '100!%' ESCAPE '!'", m), Y);
  EXPECT_EQ(eval("p LIKE '100!%' ESCAPE '!'", message_with({{"p", "1000"}})), N);
  EXPECT_EQ(eval("b LIKE 'a\\\\b' ESCAPE '\\'", m), Y);  // the escape character escaped
  EXPECT_EQ(eval("p LIKE '%!%' escape '!'", m), Y);
  EXPECT_EQ(eval("p LIKE 'x''%' ESCAPE ''''", message_with({{"p", "x%"}})), Y);
  EXPECT_EQ(error_of("p LIKE 'a' ESCAPE 'ab'"),
            "selector: ESCAPE needs exactly one character at position 18");
  EXPECT_EQ(error_of("p LIKE 'a' ESCAPE ''"),
            "selector: ESCAPE needs exactly one character at position 18");
  EXPECT_EQ(error_of("p LIKE 'a!' ESCAPE '!'"),
            "selector: LIKE pattern ends with its escape character at position 7");
  EXPECT_EQ(error_of("p LIKE x"), "selector: expected a string literal at position 7");
}

TEST(SelectorLike, UnderscoreIsOneCharacterNotOneByte) {
  const auto m = message_with({{"w", "caf\xc3\xa9"}});  // café
  EXPECT_EQ(eval("w LIKE 'caf_'", m), Y);
  EXPECT_EQ(eval("w LIKE 'caf__'", m), N);
  EXPECT_EQ(eval("w LIKE '%\xc3\xa9'", m), Y);
  EXPECT_EQ(eval("w LIKE '_a%' ESCAPE '\xc3\xa9'", m), Y);
}

TEST(SelectorLike, NullAndNonStrings) {
  EXPECT_EQ(eval("w LIKE 'a%'"), U);
  EXPECT_EQ(eval("w NOT LIKE 'a%'"), U);
  EXPECT_EQ(error_of("JMSPriority LIKE '4'"),
            "selector: expected a string expression at position 0");
  EXPECT_EQ(error_of("1 LIKE '4'"), "selector: expected a string expression at position 0");
}

TEST(SelectorLike, MatcherBacktracks) {
  LikePattern pattern;
  auto compiled = parse("x LIKE '%ab_c%abd'");
  ASSERT_TRUE(compiled.has_value());
  const LikePattern& p = (*compiled)->tree().patterns.at(0);
  EXPECT_EQ(p.shape, LikePattern::Shape::general);
  EXPECT_TRUE(like_matches(p, "abxcababxcabd"));
  EXPECT_TRUE(like_matches(p, "abxcabd"));
  EXPECT_FALSE(like_matches(p, "abxcab"));
  EXPECT_FALSE(like_matches(p, "abcabd"));
  // A long hostile input finishes (linear, no recursion).
  auto slow = parse("x LIKE '%a%a%a%a%a%a%a%a%b'");
  ASSERT_TRUE(slow.has_value());
  EXPECT_FALSE(like_matches((*slow)->tree().patterns.at(0), std::string(20000, 'a')));
}


TEST(SelectorIsNull, MissingPresentAndEmptyHeaders) {
  const auto m = message_with({{"x", ""}});
  EXPECT_EQ(eval("x IS NULL", m), N);  // present, even if empty
  EXPECT_EQ(eval("x IS NOT NULL", m), Y);
  EXPECT_EQ(eval("y IS NULL", m), Y);
  EXPECT_EQ(eval("y IS NOT NULL", m), N);
  EXPECT_EQ(eval("JMSCorrelationID IS NULL"), Y);
  EXPECT_EQ(eval("NOT y IS NULL", m), N);
  EXPECT_EQ(eval("(y = 1) IS NULL", m), Y);  // UNKNOWN is the NULL boolean
  EXPECT_EQ(error_of("x IS 5"), "selector: expected NULL at position 5");
  EXPECT_EQ(error_of("x IS NOT"), "selector: expected NULL at position 8");
}

// --- properties as numbers ---------------------------------------------------------------------

TEST(SelectorProperties, NumericTextComparesAsNumber) {
  const auto amount = [](const char* text) { return message_with({{"amount", text}}); };
  EXPECT_EQ(eval("amount > 100", amount("150")), Y);
  EXPECT_EQ(eval("amount > 100", amount("50")), N);
  EXPECT_EQ(eval("amount > 100", amount("100.5")), Y);
  EXPECT_EQ(eval("amount > 100", amount("1e3")), Y);
  EXPECT_EQ(eval("amount > 100", amount("+101")), Y);
  EXPECT_EQ(eval("amount < 0", amount("-5")), Y);
  EXPECT_EQ(eval("amount = 150", amount("150.0")), Y);
  EXPECT_EQ(eval("amount = 0.5", amount(".5")), Y);
  EXPECT_EQ(eval("amount = 5", amount("5.")), Y);
  EXPECT_EQ(eval("amount * 2 = 300", amount("150")), Y);
  EXPECT_EQ(eval("amount / 2 = 2", amount("5")), Y);    // an integer text stays a long
  EXPECT_EQ(eval("amount / 2 = 2.5", amount("5.0")), Y);
  EXPECT_EQ(eval("amount > 9223372036854775807", amount("99999999999999999999")), Y);
  // Not entirely a number: UNKNOWN, never an error.
  for (const char* text : {"abc", " 5", "5 ", "0x10", "1e", "-", "", ".", "NaN", "Infinity", "1_0"}) {
    EXPECT_EQ(eval("amount > 100", amount(text)), U) << text;
  }
}

TEST(SelectorProperties, StringComparisonStaysString) {
  const auto m = message_with({{"a", "150"}, {"b", "150.0"}});
  EXPECT_EQ(eval("a = '150'", m), Y);
  EXPECT_EQ(eval("b = '150'", m), N);
  EXPECT_EQ(eval("a = b", m), N);    // two texts compare as text
  EXPECT_EQ(eval("a >= b", m), Y);   // ordering is numeric
  EXPECT_EQ(eval("a IN ('150')", m), Y);
  EXPECT_EQ(eval("a LIKE '15%'", m), Y);
}

TEST(SelectorProperties, TrueFalseTextComparesWithBooleans) {
  EXPECT_EQ(eval("vip = TRUE", message_with({{"vip", "true"}})), Y);
  EXPECT_EQ(eval("vip = TRUE", message_with({{"vip", "True"}})), Y);
  EXPECT_EQ(eval("vip = FALSE", message_with({{"vip", "false"}})), Y);
  EXPECT_EQ(eval("vip <> TRUE", message_with({{"vip", "false"}})), Y);
  EXPECT_EQ(eval("vip = TRUE", message_with({{"vip", "1"}})), U);
  EXPECT_EQ(eval("vip = 'true'", message_with({{"vip", "true"}})), Y);
}

TEST(SelectorProperties, FirstOfRepeatedNameWins) {
  EXPECT_EQ(eval("x = 'a'", message_with({{"x", "a"}, {"x", "b"}})), Y);
}

// --- JMS headers -------------------------------------------------------------------------------

TEST(SelectorHeaders, TypedFields) {
  Message m;
  m.priority = 7;
  m.timestamp_ms = 1'700'000'000'000;
  m.expires_ms = 1'700'000'060'000;
  m.persistent = true;
  m.correlation_id = "c-1";
  m.type = "order";
  m.reply_to = "/queue/replies";
  EXPECT_EQ(eval("JMSPriority = 7", m), Y);
  EXPECT_EQ(eval("JMSPriority > 4", m), Y);
  EXPECT_EQ(eval("JMSPriority BETWEEN 5 AND 9", m), Y);
  EXPECT_EQ(eval("JMSTimestamp = 1700000000000", m), Y);
  EXPECT_EQ(eval("JMSExpiration - JMSTimestamp = 60000", m), Y);
  EXPECT_EQ(eval("JMSDeliveryMode = 'PERSISTENT'", m), Y);
  EXPECT_EQ(eval("JMSCorrelationID = 'c-1'", m), Y);
  EXPECT_EQ(eval("JMSType = 'order'", m), Y);
  EXPECT_EQ(eval("JMSType LIKE 'ord%'", m), Y);
  EXPECT_EQ(eval("JMSReplyTo = '/queue/replies'", m), Y);
  m.persistent = false;
  EXPECT_EQ(eval("JMSDeliveryMode = 'NON_PERSISTENT'", m), Y);
}

TEST(SelectorHeaders, AbsentStringsAreNull) {
  Message m;
  EXPECT_EQ(eval("JMSCorrelationID IS NULL", m), Y);
  EXPECT_EQ(eval("JMSType IS NULL", m), Y);
  EXPECT_EQ(eval("JMSReplyTo IS NULL", m), Y);
  EXPECT_EQ(eval("JMSMessageID IS NULL", m), Y);
  EXPECT_EQ(eval("JMSType = 'x'", m), U);
  EXPECT_EQ(eval("JMSExpiration = 0", m), Y);  // never expires
}

TEST(SelectorHeaders, MessageIdIsItsCanonicalText) {
  Message m;
  m.id = MessageIdGenerator(42).next();
  const std::string id = m.id.to_string();
  EXPECT_EQ(eval("JMSMessageID = '" + id + "'", m), Y);
  EXPECT_EQ(eval("JMSMessageID LIKE '" + id.substr(0, 8) + "-%'", m), Y);
  m.id = MessageId{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  EXPECT_EQ(eval("JMSMessageID = '" + m.id.to_string() + "'", m), Y);
  EXPECT_EQ(eval("JMSMessageID = '01234567-89ab-cdef-fedc-ba9876543210'", m), Y);
}

TEST(SelectorHeaders, StompSpellingsAreUserProperties) {
  Message m;
  m.priority = 9;
  m.type = "order";
  // `priority` is a user property named priority, not the header: absent here.
  EXPECT_EQ(eval("priority = 9", m), U);
  EXPECT_EQ(eval("type = 'order'", m), U);
  EXPECT_EQ(eval("priority = 9", message_with({{"priority", "9"}})), Y);
  // correlation-id is correlation minus id.
  EXPECT_EQ(canonical("correlation-id = 'x'"), "(correlation - id) = 'x'");
  // Other JMS-prefixed names (JMSX*, JMS_*) are properties too.
  EXPECT_EQ(eval("JMSXGroupID = 'g1'", message_with({{"JMSXGroupID", "g1"}})), Y);
}

// --- parse errors ------------------------------------------------------------------------------

TEST(SelectorErrors, PositionsAreByteOffsets) {
  EXPECT_EQ(error_of("(a = 1 AND b=2"), "selector: expected ')' at position 14");
  EXPECT_EQ(error_of("(a = 1"), "selector: expected ')' at position 6");
  EXPECT_EQ(error_of("a = 'abc"), "selector: unterminated string literal at position 4");
  EXPECT_EQ(error_of("a # b"), "selector: unexpected character '#' at position 2");
  EXPECT_EQ(error_of("a = \x01"), "selector: unexpected character '\\x01' at position 4");
  EXPECT_EQ(error_of("a != 1"), "selector: unexpected character '!' at position 2");
  EXPECT_EQ(error_of("a = "), "selector: unexpected end of input at position 4");
  EXPECT_EQ(error_of(""), "selector: unexpected end of input at position 0");
  EXPECT_EQ(error_of("   "), "selector: unexpected end of input at position 3");
  EXPECT_EQ(error_of("a = 1 b"), "selector: unexpected 'b' at position 6");
  EXPECT_EQ(error_of("a = 1 )"), "selector: unexpected ')' at position 6");
  EXPECT_EQ(error_of("a = 1 AND"), "selector: unexpected end of input at position 9");
  EXPECT_EQ(error_of("a = = 1"), "selector: expected an expression, found '=' at position 4");
  EXPECT_EQ(error_of("a = 'x' OR OR"), "selector: expected an expression, found OR at position 11");
  EXPECT_EQ(error_of("a NOT = 1"), "selector: expected BETWEEN, IN or LIKE after NOT at position 6");
  EXPECT_EQ(error_of("1.2.3 = a"), "selector: malformed number at position 0");
  EXPECT_EQ(error_of("a = 1e"), "selector: malformed number at position 4");
  EXPECT_EQ(error_of("a = 12abc"), "selector: malformed number at position 4");
  EXPECT_EQ(error_of("a = 9223372036854775808"),
            "selector: integer literal out of range at position 4");
  EXPECT_EQ(error_of("a = 99999999999999999999"),
            "selector: integer literal out of range at position 4");
  EXPECT_EQ(error_of("a = 1e999"), "selector: number out of range at position 4");
  EXPECT_EQ(error_of("a = \"x\""), "selector: unexpected character '\"' at position 4");
  EXPECT_EQ(code_of("a = "), Errc::invalid_argument);
}

TEST(SelectorErrors, MultiByteCharactersCountAsBytes) {
  EXPECT_EQ(error_of("caf\xc3\xa9 = 'x' )"), "selector: unexpected ')' at position 12");
}

// --- limits ------------------------------------------------------------------------------------

TEST(SelectorLimits, Nesting) {
  const auto nested = [](int depth) {
    return std::string(depth, '(') + "a = 1" + std::string(depth, ')');
  };
  EXPECT_EQ(eval(nested(99), message_with({{"a", "1"}})), Y);
  EXPECT_EQ(error_of(nested(101)), "selector: nesting deeper than 100 at position 100");
  EXPECT_EQ(code_of(nested(101)), Errc::limit_exceeded);
  // Far past the limit: an error, not a stack overflow.
  EXPECT_EQ(code_of(nested(60000)), Errc::limit_exceeded);
  std::string nots;
  for (int i = 0; i < 20000; ++i) nots += "NOT ";
  EXPECT_EQ(code_of(nots + "a"), Errc::limit_exceeded);
  EXPECT_EQ(code_of(std::string(30000, '-') + "1 = 1"), Errc::limit_exceeded);
}

TEST(SelectorLimits, TreeDepthOfLeftDeepArithmetic) {
  std::string sum = "1";
  for (int i = 0; i < 98; ++i) sum += " + 1";  // 99 adds under the comparison: depth 101
  EXPECT_EQ(code_of(sum + " + 1 = 100"), Errc::limit_exceeded);
  EXPECT_EQ(eval(sum + " = 99"), Y);  // depth 100
}

TEST(SelectorLimits, Length) {
  std::string text = "a = 1";
  text += std::string(64 * 1024 - text.size(), ' ');
  EXPECT_TRUE(parse(text).has_value());
  text += ' ';
  EXPECT_EQ(error_of(text), "selector: selector longer than 65536 bytes at position 65536");
  EXPECT_EQ(code_of(text), Errc::limit_exceeded);
}

TEST(SelectorLimits, Configurable) {
  const Limits tight{.max_length = 16, .max_depth = 2};
  EXPECT_TRUE(parse("(a = 1)", tight).has_value());
  EXPECT_TRUE(parse("((a)) = 1", tight).has_value());
  EXPECT_EQ(error_of("(((a))) = 1", tight), "selector: nesting deeper than 2 at position 2");
  EXPECT_EQ(error_of("a + b + c = 1", tight), "selector: nesting deeper than 2 at position 6");
  EXPECT_EQ(code_of("a = 'xxxxxxxxxxxxxxxx'", tight), Errc::limit_exceeded);
}

// --- facade and canonical text -----------------------------------------------------------------

TEST(SelectorFacade, KeepsTextAndIsShareable) {
  auto selector = parse("color = 'red'");
  ASSERT_TRUE(selector.has_value());
  std::shared_ptr<const Selector> shared = *selector;
  EXPECT_EQ(shared->text(), "color = 'red'");
  EXPECT_TRUE(matches(*shared, message_with({{"color", "red"}})));
  EXPECT_FALSE(matches(*shared, message_with({{"color", "blue"}})));
  EXPECT_FALSE(matches(*shared, message_with({})));
}

TEST(SelectorFacade, MatchingAllocatesNothing) {
  const char* selectors[] = {
      "color = 'blue' AND amount > 100.5 AND NOT (weight BETWEEN 1 AND 10)",
      "sku LIKE 'CAR-____-%L' OR sku LIKE 'x%' OR region IN ('eu', 'us') OR absent IS NULL",
      "JMSMessageID = '00000000-0000-0007-0000-000000000009' AND JMSType <> 'bike'",
      "(amount * 2 - -1) / 3 >= JMSPriority AND flag = TRUE AND 1 / 0 IS NULL",
  };
  Message m = message_with({{"color", "blue"}, {"amount", "150.25"}, {"weight", "3100"},
                            {"sku", "CAR-1234-XL"}, {"region", "eu"}, {"flag", "true"}});
  m.id = MessageId{7, 9};
  m.type = "car";
  for (const char* text : selectors) {
    const std::size_t before_parse = t_allocations;
    auto selector = parse(text);
    ASSERT_TRUE(selector.has_value()) << text;
    ASSERT_GT(t_allocations, before_parse);  // the counter works
    const std::size_t before = t_allocations;
    bool any = false;
    for (int i = 0; i < 100; ++i) any = matches(**selector, m) || any;
    EXPECT_EQ(t_allocations, before) << text;
    EXPECT_TRUE(any) << text;
  }
}

TEST(SelectorCanonicalText, ParsesBackToItself) {
  const char* selectors[] = {
      "JMSType = 'car' AND color = 'blue' AND weight > 2500",
      "x NOT BETWEEN -1 AND 1.5e10 OR y NOT IN ('a', 'it''s') OR z NOT LIKE 'a!%_' ESCAPE '!'",
      "NOT (a IS NULL) AND b IS NOT NULL AND -c * (d + 1) / 2 >= -9223372036854775808",
      "1500.0 = 1.5e3 AND .5 < 7. AND -0.0 = 0 AND 1e-300 > 0",
      "TRUE = (x = 'y') OR FALSE",
  };
  for (const char* text : selectors) {
    const std::string once = canonical(text);
    EXPECT_EQ(canonical(once), once) << text;
  }
  EXPECT_EQ(canonical("y IN ('b', 'a', 'b')"), "y IN ('a', 'b')");
  EXPECT_EQ(canonical("x = 1.5e3"), "x = 1500.0");
}

TEST(SelectorLexer, Tokens) {
  auto tokens = tokenize("a<>'b''c' <= 1.5E+3\t>= .5\n*/");
  ASSERT_TRUE(tokens.has_value());
  std::vector<TokenKind> kinds;
  for (const auto& t : *tokens) kinds.push_back(t.kind);
  EXPECT_EQ(kinds, (std::vector<TokenKind>{TokenKind::identifier, TokenKind::not_equal,
                                           TokenKind::string, TokenKind::less_equal,
                                           TokenKind::real, TokenKind::greater_equal,
                                           TokenKind::real, TokenKind::star, TokenKind::slash,
                                           TokenKind::end}));
  EXPECT_EQ((*tokens)[2].value, "b'c");
  EXPECT_EQ((*tokens)[2].pos, 3u);
  EXPECT_DOUBLE_EQ((*tokens)[4].real, 1500);
  EXPECT_EQ((*tokens)[9].pos, 28u);
}

}  // namespace
}  // namespace carrier::selector
