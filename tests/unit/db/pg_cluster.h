// PgCluster: a real PostgreSQL server of the tests' own, for the store's PostgreSQL runs.
//
// Debian's postgresql-15 (initdb, pg_ctl in /usr/lib/postgresql/15/bin) makes a cluster in a
// temporary folder (trust authentication, superuser "mculab") and starts it listening on a unix
// socket in that folder only (no TCP). Run as root, the server runs as "nobody", as PostgreSQL
// refuses root. One cluster per test binary, started by the first test that asks for it and
// stopped (pg_ctl stop -m fast) when the binary's tests end; each test makes a database of its
// own with NewDatabase.
// Thread-safety: call from the test's thread.
#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"

namespace mculab::db::testing {

class PgCluster {
 public:
  // The binary's cluster, started at the first call; an error says what is missing.
  static Result<PgCluster*> Shared();

  // A new empty database, and its store URL (postgresql:///NAME?host=SOCKETDIR&port=PORT&...).
  Result<std::string> NewDatabase();
  // The URL of database `name` with `extra` appended to the parameters ("password=x" ...).
  std::string Url(const std::string& name, const std::string& extra = "") const;

  const std::filesystem::path& socket_dir() const { return dir_; }
  int port() const { return port_; }

  void Stop();

 private:
  PgCluster() = default;
  Status Start();

  std::filesystem::path dir_;  // data/, the socket, the server's log
  int port_ = 0;
  int databases_ = 0;
  bool started_ = false;
};

}  // namespace mculab::db::testing
