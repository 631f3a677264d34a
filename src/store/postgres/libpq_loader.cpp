#include "store/postgres/libpq_loader.hpp"

#include <dlfcn.h>
#include <libpq-fe.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace carrier::store::postgres {

namespace {

constexpr const char* kLibpq = "libpq.so.5";

struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    l.handle = ::dlopen(kLibpq, RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) {
      const char* e = ::dlerror();
      l.error = e != nullptr ? e : kLibpq;
    }
    return l;
  }();
  return lib;
}

// The store calls these only after load_libpq() succeeded (make_store checks), so a missing
// symbol is an installation broken in a way the check did not see: say which and stop.
template <typename Fn>
Fn symbol(const char* name) {
  const Library& lib = library();
  void* p = lib.handle != nullptr ? ::dlsym(lib.handle, name) : nullptr;
  if (p == nullptr) {
    std::fprintf(stderr, "carrier: %s: %s not available (%s)\n", kLibpq, name,
                 lib.handle == nullptr ? lib.error.c_str() : "missing symbol");
    std::abort();
  }
  return reinterpret_cast<Fn>(p);
}

}  // namespace

Status load_libpq() {
  const Library& lib = library();
  if (lib.handle == nullptr) {
    return unexpected(Errc::not_found, "the PostgreSQL store needs libpq (" + lib.error + ")");
  }
  // Pipeline mode came with libpq 14: an older library would fail mid-way, so refuse it here.
  if (::dlsym(lib.handle, "PQenterPipelineMode") == nullptr) {
    return unexpected(Errc::not_found, std::string("the PostgreSQL store needs libpq 14 or later; ") + kLibpq +
                                           " has no pipeline mode");
  }
  return ok();
}

}  // namespace carrier::store::postgres

// Each resolves its libpq function once (a function-local static) and forwards to it.
#define CARRIER_LIBPQ(name) \
  static const auto fn = ::carrier::store::postgres::symbol<decltype(&::name)>(#name); \
  return fn

extern "C" {

PGconn* PQconnectdbParams(const char* const* keywords, const char* const* values, int expand_dbname) {
  CARRIER_LIBPQ(PQconnectdbParams)(keywords, values, expand_dbname);
}
void PQfinish(PGconn* conn) { CARRIER_LIBPQ(PQfinish)(conn); }
ConnStatusType PQstatus(const PGconn* conn) { CARRIER_LIBPQ(PQstatus)(conn); }
PGTransactionStatusType PQtransactionStatus(const PGconn* conn) { CARRIER_LIBPQ(PQtransactionStatus)(conn); }
char* PQerrorMessage(const PGconn* conn) { CARRIER_LIBPQ(PQerrorMessage)(conn); }
int PQsocket(const PGconn* conn) { CARRIER_LIBPQ(PQsocket)(conn); }
int PQsetnonblocking(PGconn* conn, int arg) { CARRIER_LIBPQ(PQsetnonblocking)(conn, arg); }
PQnoticeProcessor PQsetNoticeProcessor(PGconn* conn, PQnoticeProcessor proc, void* arg) {
  CARRIER_LIBPQ(PQsetNoticeProcessor)(conn, proc, arg);
}
PGresult* PQexec(PGconn* conn, const char* query) { CARRIER_LIBPQ(PQexec)(conn, query); }
PGresult* PQexecParams(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                       const char* const* param_values, const int* param_lengths, const int* param_formats,
                       int result_format) {
  CARRIER_LIBPQ(PQexecParams)(conn, command, n_params, param_types, param_values, param_lengths, param_formats,
                              result_format);
}
PGresult* PQprepare(PGconn* conn, const char* stmt_name, const char* query, int n_params, const Oid* param_types) {
  CARRIER_LIBPQ(PQprepare)(conn, stmt_name, query, n_params, param_types);
}
int PQsendQueryParams(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                      const char* const* param_values, const int* param_lengths, const int* param_formats,
                      int result_format) {
  CARRIER_LIBPQ(PQsendQueryParams)(conn, command, n_params, param_types, param_values, param_lengths, param_formats,
                                   result_format);
}
int PQsendQueryPrepared(PGconn* conn, const char* stmt_name, int n_params, const char* const* param_values,
                        const int* param_lengths, const int* param_formats, int result_format) {
  CARRIER_LIBPQ(PQsendQueryPrepared)(conn, stmt_name, n_params, param_values, param_lengths, param_formats,
                                     result_format);
}
int PQenterPipelineMode(PGconn* conn) { CARRIER_LIBPQ(PQenterPipelineMode)(conn); }
int PQexitPipelineMode(PGconn* conn) { CARRIER_LIBPQ(PQexitPipelineMode)(conn); }
int PQpipelineSync(PGconn* conn) { CARRIER_LIBPQ(PQpipelineSync)(conn); }
int PQflush(PGconn* conn) { CARRIER_LIBPQ(PQflush)(conn); }
int PQconsumeInput(PGconn* conn) { CARRIER_LIBPQ(PQconsumeInput)(conn); }
int PQisBusy(PGconn* conn) { CARRIER_LIBPQ(PQisBusy)(conn); }
PGresult* PQgetResult(PGconn* conn) { CARRIER_LIBPQ(PQgetResult)(conn); }
ExecStatusType PQresultStatus(const PGresult* res) { CARRIER_LIBPQ(PQresultStatus)(res); }
char* PQresultErrorField(const PGresult* res, int fieldcode) { CARRIER_LIBPQ(PQresultErrorField)(res, fieldcode); }
int PQntuples(const PGresult* res) { CARRIER_LIBPQ(PQntuples)(res); }
char* PQgetvalue(const PGresult* res, int tup_num, int field_num) {
  CARRIER_LIBPQ(PQgetvalue)(res, tup_num, field_num);
}
int PQgetlength(const PGresult* res, int tup_num, int field_num) {
  CARRIER_LIBPQ(PQgetlength)(res, tup_num, field_num);
}
void PQclear(PGresult* res) { CARRIER_LIBPQ(PQclear)(res); }

}  // extern "C"
