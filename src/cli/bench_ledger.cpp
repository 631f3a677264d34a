#include "cli/bench_ledger.hpp"

#include <bit>
#include <cstring>
#include <numeric>

namespace carrier::cli::bench {

namespace {

constexpr char kMagic[4] = {'C', 'B', 'N', '1'};

void put32(char* at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void put64(char* at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
std::uint32_t get32(const char* at) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(static_cast<unsigned char>(at[i])) << (8 * i);
  return v;
}
std::uint64_t get64(const char* at) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(at[i])) << (8 * i);
  return v;
}

// Marked bits of `words` below `limit`.
std::uint64_t count_below(const std::vector<std::uint64_t>& words, std::uint64_t limit) {
  std::uint64_t n = 0;
  const std::uint64_t full = std::min<std::uint64_t>(limit / 64, words.size());
  for (std::uint64_t i = 0; i < full; ++i) n += static_cast<std::uint64_t>(std::popcount(words[i]));
  if (full < words.size() && limit % 64 != 0) {
    n += static_cast<std::uint64_t>(std::popcount(words[full] & ((std::uint64_t{1} << (limit % 64)) - 1)));
  }
  return n;
}

std::uint64_t count_all(const std::vector<std::uint64_t>& words) {
  std::uint64_t n = 0;
  for (auto w : words) n += static_cast<std::uint64_t>(std::popcount(w));
  return n;
}

}  // namespace

void write_stamp(char* body, const Stamp& stamp) {
  std::memcpy(body, kMagic, 4);
  put32(body + 4, stamp.run_id);
  put32(body + 8, stamp.producer);
  put32(body + 12, 0);
  put64(body + 16, stamp.sequence);
  put64(body + 24, stamp.send_ns);
}

std::optional<Stamp> read_stamp(std::string_view body) {
  if (body.size() < kStampSize || std::memcmp(body.data(), kMagic, 4) != 0) return std::nullopt;
  Stamp stamp;
  stamp.run_id = get32(body.data() + 4);
  stamp.producer = get32(body.data() + 8);
  stamp.sequence = get64(body.data() + 16);
  stamp.send_ns = get64(body.data() + 24);
  return stamp;
}

Ledger::Ledger(std::uint32_t producers) : bits_(producers) {}

bool Ledger::record(std::uint32_t producer, std::uint64_t sequence) {
  if (producer >= bits_.size()) {
    ++unknown_;
    return false;
  }
  ++deliveries_;
  auto& words = bits_[producer];
  const std::uint64_t word = sequence / 64;
  // Sequences arrive nearly in order; a wild one (a corrupt stamp) must not allocate the world.
  if (word >= words.size()) {
    if (word > (std::uint64_t{1} << 32)) {
      ++unknown_;
      --deliveries_;
      return false;
    }
    words.resize(std::max<std::uint64_t>(word + 1, words.size() * 2), 0);
  }
  const std::uint64_t bit = std::uint64_t{1} << (sequence % 64);
  if (words[word] & bit) {
    ++duplicates_;
    return false;
  }
  words[word] |= bit;
  return true;
}

std::uint64_t Ledger::distinct() const {
  std::uint64_t n = 0;
  for (const auto& words : bits_) n += count_all(words);
  return n;
}

std::uint64_t Ledger::missing(const std::vector<std::uint64_t>& sent) const {
  std::uint64_t n = 0;
  for (std::size_t p = 0; p < sent.size(); ++p) {
    const std::uint64_t got = p < bits_.size() ? count_below(bits_[p], sent[p]) : 0;
    n += sent[p] - got;
  }
  return n;
}

std::uint64_t Ledger::beyond(const std::vector<std::uint64_t>& sent) const {
  std::uint64_t n = 0;
  for (std::size_t p = 0; p < bits_.size(); ++p) {
    const std::uint64_t limit = p < sent.size() ? sent[p] : 0;
    n += count_all(bits_[p]) - count_below(bits_[p], limit);
  }
  return n;
}

void Ledger::merge(const Ledger& other) {
  if (other.bits_.size() > bits_.size()) bits_.resize(other.bits_.size());
  for (std::size_t p = 0; p < other.bits_.size(); ++p) {
    auto& mine = bits_[p];
    const auto& theirs = other.bits_[p];
    if (theirs.size() > mine.size()) mine.resize(theirs.size(), 0);
    for (std::size_t i = 0; i < theirs.size(); ++i) {
      duplicates_ += static_cast<std::uint64_t>(std::popcount(mine[i] & theirs[i]));
      mine[i] |= theirs[i];
    }
  }
  deliveries_ += other.deliveries_;
  duplicates_ += other.duplicates_;
  unknown_ += other.unknown_;
}

Accounting account(Kind kind, const std::vector<Ledger>& consumers, const std::vector<std::uint64_t>& sent) {
  Accounting a;
  const std::uint64_t total_sent = std::accumulate(sent.begin(), sent.end(), std::uint64_t{0});
  if (consumers.empty()) return a;
  if (kind == Kind::queue) {
    Ledger all(static_cast<std::uint32_t>(sent.size()));
    for (const auto& c : consumers) all.merge(c);
    a.expected = total_sent;
    a.deliveries = all.deliveries();
    a.missing = all.missing(sent);
    a.duplicates = all.duplicates();
    a.beyond = all.beyond(sent);
    return a;
  }
  for (const auto& c : consumers) {
    a.expected += total_sent;
    a.deliveries += c.deliveries();
    a.missing += c.missing(sent);
    a.duplicates += c.duplicates();
    a.beyond += c.beyond(sent);
  }
  return a;
}

}  // namespace carrier::cli::bench
