#pragma once

#include "base/result.hpp"

namespace carrier::store::postgres {

// libpq is opened with dlopen when the PostgreSQL store is chosen, not linked: linked, it and
// what it pulls in (OpenSSL, GnuTLS, Kerberos, LDAP: ~30 libraries) are mapped and relocated at
// every start, which costs ~4.5 MiB of resident memory and start-up time for brokers that never
// use it. libpq_loader.cpp defines the PQ* functions the store calls, each forwarding to the
// loaded library.
// Errc::not_found naming the library when it cannot be loaded. Thread-safe; loads once.
Status load_libpq();

}  // namespace carrier::store::postgres
