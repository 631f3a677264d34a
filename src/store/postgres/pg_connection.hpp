#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"

struct pg_conn;
struct pg_result;

// A thin layer over libpq for the PostgreSQL store: owning handles, errors as carrier::Error,
// binary parameters, and a pipeline that sends a whole group of statements before reading any
// result. Runs on: whichever one thread owns the connection (start-up, then the store's
// writer); nothing here is thread-safe.
namespace carrier::store::postgres {

struct ResultDeleter {
  void operator()(pg_result* r) const;
};
using PgResult = std::unique_ptr<pg_result, ResultDeleter>;

// Postgres binary parameter encodings (network byte order).
struct Int8Param {
  explicit Int8Param(std::int64_t v);
  char bytes[8];
};
struct Int4Param {
  explicit Int4Param(std::int32_t v);
  char bytes[4];
};
struct Int2Param {
  explicit Int2Param(std::int16_t v);
  char bytes[2];
};
std::int64_t read_int8(const char* p);
std::int32_t read_int4(const char* p);

// A one-dimensional array parameter in PostgreSQL's binary format (for `unnest($1::int8[])`),
// so a whole group's rows travel as a handful of parameters of one statement.
class ArrayParam {
 public:
  explicit ArrayParam(unsigned element_oid) : element_oid_(element_oid) {}
  void add_int8(std::int64_t v);
  void add_int4(std::int32_t v);
  void add_int2(std::int16_t v);
  void add_bytes(std::string_view bytes);
  std::size_t count() const { return count_; }
  std::size_t bytes() const { return elements_.size(); }  // about what encoded() will be
  void clear() {
    elements_.clear();
    count_ = 0;
  }
  // The parameter's bytes (header + elements); valid until the next change.
  const std::string& encoded();

 private:
  unsigned element_oid_;
  std::string elements_;  // a header's room, then the elements
  std::string encoded_;   // only for an empty array
  std::uint32_t count_ = 0;

  // One element: its length (4 bytes), then `width` big-endian bytes of `v`.
  void add_fixed(std::uint64_t v, int width);
};

// Binary parameters for one statement; the pointers must outlive the send call only (libpq
// copies them into its output buffer).
struct Params {
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
  void add(const char* data, std::size_t size) {
    values.push_back(data);
    lengths.push_back(static_cast<int>(size));
    formats.push_back(1);
  }
  template <class P>
  void add(const P& p) {
    add(p.bytes, sizeof p.bytes);
  }
  void add(ArrayParam& array) {
    const std::string& bytes = array.encoded();
    add(bytes.data(), bytes.size());
  }
  void clear() {
    values.clear();
    lengths.clear();
    formats.clear();
  }
};

class PgConnection {
 public:
  PgConnection() = default;
  PgConnection(PgConnection&& other) noexcept : conn_(other.conn_) { other.conn_ = nullptr; }
  PgConnection& operator=(PgConnection&& other) noexcept;
  PgConnection(const PgConnection&) = delete;
  PgConnection& operator=(const PgConnection&) = delete;
  ~PgConnection() { reset(); }

  // Blocking connect. `url` is a libpq URI or key=value string; unless it says otherwise,
  // connect_timeout is 10 s and application_name "carrier". `database`, when given, replaces
  // the URL's database (for administrative connections). Errc::unavailable when the server
  // cannot be reached or refuses the connection.
  static Result<PgConnection> connect(const std::string& url, const char* database = nullptr);

  explicit operator bool() const { return conn_ != nullptr; }
  bool broken() const;
  void reset();
  pg_conn* get() const { return conn_; }

  // One statement, waited for. `binary_results` asks for binary column values.
  Result<PgResult> exec(const std::string& sql, const Params& params = {}, bool binary_results = false);
  // A named prepared statement; `types` are parameter type OIDs.
  Status prepare(const char* name, const std::string& sql, const std::vector<unsigned>& types);

  // The error for the connection's last failure, or for `result` when it is an error result:
  // Errc::unavailable for connection problems (and SQLSTATE classes 08, 57P), io_error else.
  Error error(std::string_view what, const pg_result* result = nullptr) const;

 private:
  pg_conn* conn_ = nullptr;
};

// Sends statements in pipeline mode on a non-blocking connection, then syncs and reads every
// result, writing and reading as the socket allows (a large group cannot deadlock on full
// socket buffers). The first failed statement's error is the outcome; later ones are skipped
// by the server. After finish() the connection is back in ordinary (blocking) mode, unless the
// connection broke.
class Pipeline {
 public:
  explicit Pipeline(PgConnection& connection);
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  bool begun() const { return ok_; }
  void send_query(const char* sql);
  void send_prepared(const char* name, const Params& params);
  // `idle_timeout`: the longest wait for the socket with no progress before giving up.
  Status finish(std::chrono::milliseconds idle_timeout);

 private:
  PgConnection& c_;
  bool ok_ = false;
  std::optional<Error> send_error_;
};

}  // namespace carrier::store::postgres
