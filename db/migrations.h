// Schema migrations, numbered from 1, one set per backend: SQLite's in db/migrations/NNNN_name.sql
// (a database's PRAGMA user_version is the number of the last one applied to it), PostgreSQL's in
// db/migrations/postgresql/ with the same numbers (its table mculab_schema holds that number).
// The SQL is embedded into the binary at build time (db/embed_migrations.cmake).
#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace mculab::db {

struct Migration {
  int version = 0;
  std::string name;  // file name, for messages
  std::string sql;   // one or more statements, applied in one transaction
};

// Every migration shipped with this build, in version order: SQLite's, PostgreSQL's.
const std::vector<Migration>& EmbeddedMigrations();
const std::vector<Migration>& EmbeddedPostgresMigrations();

// What both backends check before migrating (migrations.cc): numbers increase (a gap is a number
// another branch owns, db/embed_migrations.cmake); a database at `have` is not newer than the last
// of `migrations`. `database` names it in the message ("the database", "the PostgreSQL database").
Status CheckMigrationOrder(const std::vector<Migration>& migrations);
Status CheckNotNewer(const std::vector<Migration>& migrations, int have,
                     const std::string& database);

}  // namespace mculab::db
