#include "store/postgres/pg_connection.hpp"

#include <libpq-fe.h>
#include <poll.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace carrier::store::postgres {

namespace {

// libpq's messages end in a newline and continue on indented lines: one line for our logs.
std::string one_line(const char* text) {
  std::string s;
  bool space = false;
  for (const char* p = text ? text : ""; *p; ++p) {
    if (*p == '\n' || *p == '\t' || *p == ' ') {
      space = !s.empty();
      continue;
    }
    if (space) s += ' ';
    space = false;
    s += *p;
  }
  return s;
}

void put_be(char* out, std::uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

std::uint64_t get_be(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// A one-dimensional array's header: ndim, flags, element type, length, lower bound.
constexpr std::size_t kArrayHeaderBytes = 20;

}  // namespace

void ResultDeleter::operator()(pg_result* r) const { PQclear(r); }

Int8Param::Int8Param(std::int64_t v) { put_be(bytes, static_cast<std::uint64_t>(v), 8); }
Int4Param::Int4Param(std::int32_t v) { put_be(bytes, static_cast<std::uint32_t>(v), 4); }
Int2Param::Int2Param(std::int16_t v) { put_be(bytes, static_cast<std::uint16_t>(v), 2); }
std::int64_t read_int8(const char* p) { return static_cast<std::int64_t>(get_be(p, 8)); }
std::int32_t read_int4(const char* p) { return static_cast<std::int32_t>(get_be(p, 4)); }

void ArrayParam::add_fixed(std::uint64_t v, int width) {
  if (elements_.empty()) elements_.resize(kArrayHeaderBytes);  // patched by encoded()
  char b[12];
  put_be(b, static_cast<std::uint64_t>(width), 4);
  put_be(b + 4, v, width);
  elements_.append(b, static_cast<std::size_t>(4 + width));
  ++count_;
}

void ArrayParam::add_int8(std::int64_t v) { add_fixed(static_cast<std::uint64_t>(v), 8); }
void ArrayParam::add_int4(std::int32_t v) { add_fixed(static_cast<std::uint32_t>(v), 4); }
void ArrayParam::add_int2(std::int16_t v) { add_fixed(static_cast<std::uint16_t>(v), 2); }

void ArrayParam::add_bytes(std::string_view bytes) {
  if (elements_.empty()) elements_.resize(kArrayHeaderBytes);  // patched by encoded()
  char b[4];
  put_be(b, bytes.size(), 4);
  elements_.append(b, sizeof b);
  elements_.append(bytes);
  ++count_;
}

const std::string& ArrayParam::encoded() {
  // ndim, has-nulls flag, element type, then per dimension its length and lower bound (1).
  if (count_ == 0) {
    encoded_.assign(12, '\0');
    put_be(encoded_.data() + 8, element_oid_, 4);
    return encoded_;
  }
  char* header = elements_.data();
  put_be(header, 1, 4);
  put_be(header + 4, 0, 4);
  put_be(header + 8, element_oid_, 4);
  put_be(header + 12, count_, 4);
  put_be(header + 16, 1, 4);
  return elements_;
}

PgConnection& PgConnection::operator=(PgConnection&& other) noexcept {
  if (this != &other) {
    reset();
    conn_ = other.conn_;
    other.conn_ = nullptr;
  }
  return *this;
}

void PgConnection::reset() {
  if (conn_ != nullptr) PQfinish(conn_);
  conn_ = nullptr;
}

bool PgConnection::broken() const { return conn_ == nullptr || PQstatus(conn_) == CONNECTION_BAD; }

Result<PgConnection> PgConnection::connect(const std::string& url, const char* database) {
  // Defaults first: a later keyword wins, and the first `dbname` expands into the URL's own
  // settings (a second one is a plain database name).
  const char* const keywords[] = {"connect_timeout", "application_name", "dbname", database ? "dbname" : nullptr,
                                  nullptr};
  const char* const values[] = {"10", "carrier", url.c_str(), database, nullptr};
  PgConnection c;
  c.conn_ = PQconnectdbParams(keywords, values, 1);
  if (c.conn_ == nullptr) return unexpected(Errc::unavailable, "postgres: out of memory while connecting");
  if (PQstatus(c.conn_) != CONNECTION_OK) {
    return unexpected(Errc::unavailable, "postgres: cannot connect: " + one_line(PQerrorMessage(c.conn_)));
  }
  // NOTICEs ("schema already exists, skipping", "drop cascades to...") are not errors, and libpq
  // would print them to stderr past our logger: drop them.
  PQsetNoticeProcessor(c.conn_, [](void*, const char*) {}, nullptr);
  return c;
}

Error PgConnection::error(std::string_view what, const pg_result* result) const {
  std::string message;
  const char* state = nullptr;
  if (result != nullptr) {
    // The primary message only: DETAIL can quote a whole row, message bytes and all.
    message = one_line(PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY));
    state = PQresultErrorField(result, PG_DIAG_SQLSTATE);
  }
  if (message.empty()) message = conn_ ? one_line(PQerrorMessage(conn_)) : "not connected";
  const std::string_view sqlstate = state ? state : "";
  const bool connection_problem = broken() || sqlstate.starts_with("08") || sqlstate.starts_with("57P");
  return Error(connection_problem ? Errc::unavailable : Errc::io_error,
               fmt::format("postgres: {}: {}{}", what, message, sqlstate.empty() ? "" : fmt::format(" (SQLSTATE {})", sqlstate)));
}

Result<PgResult> PgConnection::exec(const std::string& sql, const Params& params, bool binary_results) {
  if (conn_ == nullptr) return unexpected(Errc::unavailable, "postgres: not connected");
  PgResult r(PQexecParams(conn_, sql.c_str(), static_cast<int>(params.values.size()), nullptr,
                          params.values.data(), params.lengths.data(), params.formats.data(), binary_results ? 1 : 0));
  const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
  return unexpected(error(sql.substr(0, sql.find_first_of("\n(")), r.get()));
}

Status PgConnection::prepare(const char* name, const std::string& sql, const std::vector<unsigned>& types) {
  PgResult r(PQprepare(conn_, name, sql.c_str(), static_cast<int>(types.size()), types.data()));
  if (r && PQresultStatus(r.get()) == PGRES_COMMAND_OK) return ok();
  return unexpected(error(fmt::format("preparing {}", name), r.get()));
}

// ---- pipeline ----------------------------------------------------------------------------------

Pipeline::Pipeline(PgConnection& connection) : c_(connection) {
  if (c_.broken()) {
    send_error_ = c_.error("pipeline");
    return;
  }
  if (PQsetnonblocking(c_.get(), 1) != 0 || PQenterPipelineMode(c_.get()) != 1) {
    send_error_ = c_.error("entering pipeline mode");
    return;
  }
  ok_ = true;
}

void Pipeline::send_query(const char* sql) {
  if (send_error_) return;
  if (PQsendQueryParams(c_.get(), sql, 0, nullptr, nullptr, nullptr, nullptr, 0) != 1) {
    send_error_ = c_.error(fmt::format("sending {}", sql));
  }
}

void Pipeline::send_prepared(const char* name, const Params& params) {
  if (send_error_) return;
  if (PQsendQueryPrepared(c_.get(), name, static_cast<int>(params.values.size()), params.values.data(),
                          params.lengths.data(), params.formats.data(), 0) != 1) {
    send_error_ = c_.error(fmt::format("sending {}", name));
  }
}

Status Pipeline::finish(std::chrono::milliseconds idle_timeout) {
  if (!ok_) return unexpected(*send_error_);
  PGconn* conn = c_.get();
  if (!send_error_ && PQpipelineSync(conn) != 1) send_error_ = c_.error("pipeline sync");
  // Once a send failed the connection is unusable for this group: report it, and the caller
  // drops the connection (it is not worth reading what the server did with half a pipeline).
  if (send_error_) return unexpected(*send_error_);

  std::optional<Error> first_error;
  bool flushing = true;
  bool synced = false;
  bool last_was_null = false;
  while (!synced) {
    if (flushing) {
      const int f = PQflush(conn);
      if (f < 0) return unexpected(c_.error("sending the pipeline"));
      flushing = f == 1;
    }
    if (!PQisBusy(conn)) {
      PGresult* raw = PQgetResult(conn);
      if (raw != nullptr) {
        PgResult r(raw);
        last_was_null = false;
        switch (PQresultStatus(raw)) {
          case PGRES_PIPELINE_SYNC: synced = true; break;
          case PGRES_COMMAND_OK:
          case PGRES_TUPLES_OK:
          case PGRES_PIPELINE_ABORTED: break;  // skipped after an earlier error
          default:
            if (!first_error) first_error = c_.error("pipeline", raw);
        }
        continue;
      }
      // A null ends one statement's results; two in a row mean nothing is buffered.
      if (!last_was_null) {
        last_was_null = true;
        continue;
      }
    }
    if (c_.broken()) return unexpected(first_error ? *first_error : c_.error("pipeline"));
    pollfd p{PQsocket(conn), static_cast<short>(POLLIN | (flushing ? POLLOUT : 0)), 0};
    const int n = ::poll(&p, 1, static_cast<int>(idle_timeout.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return unexpected(Errc::unavailable, std::string("postgres: poll: ") + std::strerror(errno));
    if (n == 0) {
      return unexpected(Errc::unavailable,
                        fmt::format("postgres: no answer from the server for {} ms", idle_timeout.count()));
    }
    if ((p.revents & (POLLIN | POLLERR | POLLHUP)) && PQconsumeInput(conn) != 1) {
      return unexpected(first_error ? *first_error : c_.error("reading the pipeline's results"));
    }
    last_was_null = false;
  }
  if (PQexitPipelineMode(conn) != 1 || PQsetnonblocking(conn, 0) != 0) {
    return unexpected(first_error ? *first_error : c_.error("leaving pipeline mode"));
  }
  if (first_error) return unexpected(*first_error);
  return ok();
}

}  // namespace carrier::store::postgres
