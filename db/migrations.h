// Schema migrations, numbered from 1. The SQL lives in db/migrations/NNNN_name.sql and is
// embedded into the binary at build time (db/embed_migrations.cmake). A database's
// PRAGMA user_version is the number of the last migration applied to it.
#pragma once

#include <string>
#include <vector>

namespace mculab::db {

struct Migration {
  int version = 0;
  std::string name;  // file name, for messages
  std::string sql;   // one or more statements, applied in one transaction
};

// Every migration shipped with this build, in version order.
const std::vector<Migration>& EmbeddedMigrations();

}  // namespace mculab::db
