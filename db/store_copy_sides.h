// One database's side of a store copy (db/store_copy.h): what the copy reads of the source and
// writes to the destination, the same calls on SQLite and PostgreSQL. The SQL both run is the same
// text (quoted identifiers from the catalogue, every value a parameter); what differs is how each
// lists its tables and columns, which tables it derives from others, how rows go in (PostgreSQL:
// binary COPY) and what it sets right after a copy. db-internal: only db/store_copy*.cc include
// this. Thread-safety: one thread at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common/result.h"

namespace mculab::db {

enum class ColumnType { kInt, kReal, kText };

struct CopyColumn {
  std::string name;
  ColumnType type = ColumnType::kText;
  bool operator==(const CopyColumn&) const = default;
};

// A table as the copy sees it: its columns in the catalogue's order and the columns it is copied
// in the order of: its primary key, or for a table without one the column its rows are grouped by
// (`grouped`: rows of one key value are copied in one batch).
struct CopyTable {
  std::string name;
  std::vector<CopyColumn> columns;
  std::vector<std::string> key;
  bool grouped = false;
};

// A value of a row; std::monostate is SQL NULL (a column added by a migration without a default
// leaves NULL in the rows before it).
using CopyValue = std::variant<std::monostate, std::int64_t, double, std::string>;
using CopyRow = std::vector<CopyValue>;

class CopySide {
 public:
  virtual ~CopySide() = default;

  // The store's URL with any password hidden, for messages.
  virtual const std::string& name() const = 0;
  // The lab's tables: every table of the schema but the ones the database derives from others.
  virtual Result<std::vector<CopyTable>> Tables() = 0;

  // A read transaction over every read that follows (the source's snapshot), and its end.
  virtual Status BeginSnapshot() = 0;
  virtual Status EndSnapshot() = 0;

  virtual Result<std::uint64_t> Count(const CopyTable& t) = 0;
  // The largest key stored, if any row is.
  virtual Result<std::optional<CopyRow>> LastKey(const CopyTable& t) = 0;
  // Rows whose key is at most `key`.
  virtual Result<std::uint64_t> CountUpTo(const CopyTable& t, const CopyRow& key) = 0;
  // The row of key `key` (a table with a primary key), if stored.
  virtual Result<std::optional<CopyRow>> RowAt(const CopyTable& t, const CopyRow& key) = 0;
  // Every row whose key is above `after` (every row: nullopt), in key order, each given to `row`
  // (whose error ends the scan and is returned).
  virtual Status Scan(const CopyTable& t, const std::optional<CopyRow>& after,
                      const std::function<Status(CopyRow&&)>& row) = 0;

  // Writing: a transaction, rows inserted into it (columns in the table's order), its commit.
  virtual Status Begin() = 0;
  virtual Status Insert(const CopyTable& t, const std::vector<CopyRow>& rows) = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;
  // After every table was copied: what the database derives (counters, sequences, statistics).
  virtual Status FinishCopy() = 0;
};

// The side on the SQLite file at `path` / the PostgreSQL database at `url`, already migrated;
// `name` for messages.
Result<std::unique_ptr<CopySide>> OpenSqliteCopySide(const std::filesystem::path& path,
                                                     std::string name);
Result<std::unique_ptr<CopySide>> OpenPgCopySide(const std::string& url, std::string name);

}  // namespace mculab::db
