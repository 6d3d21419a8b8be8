// The two databases' sides of a store copy: the SQL they share (SqlCopySide), then what is
// SQLite's and PostgreSQL's own (their catalogues, their derived tables, what a copy leaves to
// set).
#include "db/store_copy_sides.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <type_traits>

#include "db/pg_binary_copy.h"
#include "db/pg_statement.h"
#include "db/pg_store.h"
#include "db/sql_statement.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

// Statements stay under both databases' limits on parameters (SQLite 32766, PostgreSQL 65535) and
// a few hundred rows each: past that a longer statement saves nothing.
constexpr std::size_t kMaxParameters = 30'000;
constexpr std::size_t kMaxRowsPerInsert = 500;

// Tables without a primary key, and the column their rows are copied in groups of.
const std::map<std::string, std::string, std::less<>> kGroupedTables = {{"samples", "run_id"}};

// An identifier from the catalogue, quoted for either database.
std::string Quote(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string Joined(const std::vector<std::string>& names, const std::string& suffix = "") {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + Quote(n) + suffix;
  return out;
}

std::vector<std::string> ColumnNames(const CopyTable& t) {
  std::vector<std::string> out;
  for (const CopyColumn& c : t.columns) out.push_back(c.name);
  return out;
}

std::string Placeholders(std::size_t n) {
  std::string out = "(";
  for (std::size_t i = 0; i < n; ++i) out += i == 0 ? "?" : ", ?";
  return out + ")";
}

// `t` with its key columns set: the primary key's (`key`, in key order) or, for a table without
// one, its grouping column.
Result<CopyTable> WithKey(CopyTable t, std::vector<std::string> key) {
  if (key.empty()) {
    auto group = kGroupedTables.find(t.name);
    if (group == kGroupedTables.end()) {
      return MakeError(ErrorCode::kInternal,
                       "table " + t.name +
                           " has no primary key, so a copy could not resume it: give it one, or "
                           "name the column its rows are grouped by in db/store_copy_sides.cc");
    }
    key.push_back(group->second);
    t.grouped = true;
  }
  t.key = std::move(key);
  return t;
}

template <typename Conn>
class SqlCopySide : public CopySide {
 public:
  using U = typename Conn::Use;

  const std::string& name() const override { return name_; }

  Status BeginSnapshot() override { return Exec(snapshot_begin_); }
  Status EndSnapshot() override { return Exec("COMMIT"); }

  Result<std::uint64_t> Count(const CopyTable& t) override {
    U u(c_->Statement("SELECT COUNT(*) FROM " + Quote(t.name)));
    return FirstRow<std::uint64_t>(
        u, [](U& row) { return row.UInt(0); }, std::uint64_t{0});
  }

  Result<std::optional<CopyRow>> LastKey(const CopyTable& t) override {
    U u(c_->Statement("SELECT " + Joined(t.key) + " FROM " + Quote(t.name) + " ORDER BY " +
                      Joined(t.key, " DESC") + " LIMIT 1"));
    return ReadOne(u, KeyColumns(t));
  }

  Result<std::uint64_t> CountUpTo(const CopyTable& t, const CopyRow& key) override {
    U u(c_->Statement("SELECT COUNT(*) FROM " + Quote(t.name) + " WHERE (" + Joined(t.key) +
                      ") <= " + Placeholders(key.size())));
    BindAll(u, key);
    return FirstRow<std::uint64_t>(
        u, [](U& row) { return row.UInt(0); }, std::uint64_t{0});
  }

  Result<std::optional<CopyRow>> RowAt(const CopyTable& t, const CopyRow& key) override {
    U u(c_->Statement("SELECT " + Joined(ColumnNames(t)) + " FROM " + Quote(t.name) + " WHERE (" +
                      Joined(t.key) + ") = " + Placeholders(key.size())));
    BindAll(u, key);
    return ReadOne(u, t.columns);
  }

  Status Scan(const CopyTable& t, const std::optional<CopyRow>& after,
              const std::function<Status(CopyRow&&)>& row) override {
    std::string sql = "SELECT " + Joined(ColumnNames(t)) + " FROM " + Quote(t.name);
    if (after) sql += " WHERE (" + Joined(t.key) + ") > " + Placeholders(after->size());
    sql += " ORDER BY " + Joined(t.key) + ScanTieBreak(t);
    U u(c_->Statement(sql));
    if (after) BindAll(u, *after);
    while (u.Next()) {
      if (Status s = row(ReadRow(u, t.columns)); !s.ok()) return s;
    }
    return u.status();
  }

  Status Begin() override { return Exec(write_begin_); }
  Status Commit() override { return Exec("COMMIT"); }
  void Rollback() override { (void)Exec("ROLLBACK"); }

  Status Insert(const CopyTable& t, const std::vector<CopyRow>& rows) override {
    const std::size_t per_statement =
        std::clamp<std::size_t>(kMaxParameters / t.columns.size(), 1, kMaxRowsPerInsert);
    const std::string head =
        "INSERT INTO " + Quote(t.name) + " (" + Joined(ColumnNames(t)) + ") VALUES ";
    const std::string one = Placeholders(t.columns.size());
    for (std::size_t i = 0; i < rows.size(); i += per_statement) {
      const std::size_t n = std::min(per_statement, rows.size() - i);
      std::string sql = head;
      for (std::size_t k = 0; k < n; ++k) sql += (k == 0 ? "" : ", ") + one;
      U u(c_->Statement(sql));
      for (std::size_t k = 0; k < n; ++k) BindAll(u, rows[i + k]);
      if (Status s = u.Exec("copying rows"); !s.ok()) {
        return MakeError(s.error().code, "inserting into " + t.name + ": " + s.error().message);
      }
    }
    return {};
  }

 protected:
  SqlCopySide(std::unique_ptr<Conn> c, std::string name, std::string snapshot_begin,
              std::string write_begin)
      : c_(std::move(c)),
        name_(std::move(name)),
        snapshot_begin_(std::move(snapshot_begin)),
        write_begin_(std::move(write_begin)) {}

  // What orders a grouped table's rows within a group, after the key ("" when nothing does).
  virtual std::string ScanTieBreak(const CopyTable& t) const = 0;

  Status Exec(const std::string& sql) { return U(c_->Statement(sql)).Exec(sql.c_str()); }

  std::unique_ptr<Conn> c_;

 private:
  static std::vector<CopyColumn> KeyColumns(const CopyTable& t) {
    std::vector<CopyColumn> out;
    for (const std::string& k : t.key) {
      auto c = std::find_if(t.columns.begin(), t.columns.end(),
                            [&](const CopyColumn& col) { return col.name == k; });
      out.push_back(c == t.columns.end() ? CopyColumn{k, ColumnType::kText} : *c);
    }
    return out;
  }

  static void BindAll(U& u, const CopyRow& values) {
    for (const CopyValue& v : values) {
      std::visit(
          [&u](const auto& x) {
            if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
              u.BindNull();
            } else {
              u.Bind(x);
            }
          },
          v);
    }
  }

  static CopyRow ReadRow(U& u, const std::vector<CopyColumn>& cols) {
    CopyRow row;
    row.reserve(cols.size());
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const int col = static_cast<int>(i);
      if (u.IsNull(col)) {
        row.emplace_back(std::monostate());
        continue;
      }
      switch (cols[i].type) {
        case ColumnType::kInt:
          row.emplace_back(u.Int(col));
          break;
        case ColumnType::kReal:
          row.emplace_back(u.Real(col));
          break;
        case ColumnType::kText:
          row.emplace_back(u.Text(col));
          break;
      }
    }
    return row;
  }

  static Result<std::optional<CopyRow>> ReadOne(U& u, const std::vector<CopyColumn>& cols) {
    if (!u.Next()) {
      if (!u.status().ok()) return u.status().error();
      return std::optional<CopyRow>();
    }
    return std::optional<CopyRow>(ReadRow(u, cols));
  }

  std::string name_;
  std::string snapshot_begin_;
  std::string write_begin_;
};

// ---------------------------------------------------------------------------------------------
// SQLite

// A declared type's affinity (SQLite's "Datatypes In SQLite", 3.1).
Result<ColumnType> SqliteColumnType(const std::string& table, const std::string& column,
                                    std::string declared) {
  for (char& ch : declared) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  auto has = [&](const char* s) { return declared.find(s) != std::string::npos; };
  if (has("INT")) return ColumnType::kInt;
  if (has("CHAR") || has("CLOB") || has("TEXT")) return ColumnType::kText;
  if (has("REAL") || has("FLOA") || has("DOUB")) return ColumnType::kReal;
  return MakeError(ErrorCode::kInternal, "table " + table + ", column " + column + " has type '" +
                                             declared + "', which the copy does not know");
}

class SqliteCopySide final : public SqlCopySide<Connection> {
 public:
  SqliteCopySide(std::unique_ptr<Connection> c, std::string name)
      : SqlCopySide(std::move(c), std::move(name), "BEGIN", "BEGIN IMMEDIATE") {}

  Result<std::vector<CopyTable>> Tables() override {
    std::vector<std::pair<std::string, std::string>> all;  // name, sql
    {
      Use u(
          c_->Statement("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"));
      auto rows = AllRows(u, [](Use& row) { return std::make_pair(row.Text(0), row.Text(1)); });
      if (!rows.ok()) return rows.error();
      all = std::move(*rows);
    }
    // Derived: SQLite's own tables, the job counts its triggers keep, and virtual tables (the
    // label search) with the shadow tables that hold their data.
    std::set<std::string> derived = {"job_counts", "label_counts"};
    std::vector<std::string> virtual_tables;
    for (const auto& [name, sql] : all) {
      if (sql.rfind("CREATE VIRTUAL TABLE", 0) == 0) virtual_tables.push_back(name + "_");
    }
    std::vector<CopyTable> out;
    for (const auto& [name, sql] : all) {
      if (name.rfind("sqlite_", 0) == 0 || derived.count(name) > 0) continue;
      // A named copy: clang 14 (the fuzz build) cannot capture a structured binding.
      const std::string& table = name;
      if (std::any_of(virtual_tables.begin(), virtual_tables.end(), [&](const std::string& v) {
            return table.rfind(v, 0) == 0 || table + "_" == v;
          })) {
        continue;
      }
      CopyTable t{name, {}, {}, false};
      std::vector<std::pair<std::int64_t, std::string>> key;
      Use u(c_->Statement("SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid"));
      u.Bind(name);
      while (u.Next()) {
        auto type = SqliteColumnType(name, u.Text(0), u.Text(1));
        if (!type.ok()) return type.error();
        t.columns.push_back({u.Text(0), *type});
        if (u.Int(2) > 0) key.emplace_back(u.Int(2), u.Text(0));
      }
      if (!u.status().ok()) return u.status().error();
      std::sort(key.begin(), key.end());
      std::vector<std::string> key_names;
      for (auto& k : key) key_names.push_back(std::move(k.second));
      auto keyed = WithKey(std::move(t), std::move(key_names));
      if (!keyed.ok()) return keyed.error();
      out.push_back(std::move(*keyed));
    }
    return out;
  }

  // SQLite's derived tables followed every insert (triggers); AUTOINCREMENT's counter too.
  Status FinishCopy() override { return {}; }

 private:
  // A grouped table's rows in the order they were stored.
  std::string ScanTieBreak(const CopyTable& t) const override { return t.grouped ? ", rowid" : ""; }
};

// ---------------------------------------------------------------------------------------------
// PostgreSQL

Result<ColumnType> PgColumnType(const std::string& table, const std::string& column,
                                const std::string& type) {
  if (type == "bigint" || type == "integer" || type == "smallint") return ColumnType::kInt;
  if (type == "double precision" || type == "real") return ColumnType::kReal;
  if (type == "text" || type == "character varying" || type == "character")
    return ColumnType::kText;
  return MakeError(ErrorCode::kInternal, "table " + table + ", column " + column + " has type '" +
                                             type + "', which the copy does not know");
}

class PgCopySide final : public SqlCopySide<PgConnection> {
 public:
  PgCopySide(std::unique_ptr<PgConnection> c, std::string name)
      : SqlCopySide(std::move(c), std::move(name),
                    "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "BEGIN") {}

  Result<std::vector<CopyTable>> Tables() override {
    std::vector<std::string> names;
    {
      PgUse u(c_->Statement(
          "SELECT table_name::text FROM information_schema.tables WHERE table_schema = "
          "current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name"));
      auto rows = AllRows(u, [](PgUse& row) { return row.Text(0); });
      if (!rows.ok()) return rows.error();
      names = std::move(*rows);
    }
    // Derived: the schema's version (each side has its own) and the samples counter.
    const std::set<std::string> derived = {"mculab_schema", "samples_stored"};
    std::vector<CopyTable> out;
    for (const std::string& name : names) {
      if (derived.count(name) > 0) continue;
      CopyTable t{name, {}, {}, false};
      {
        PgUse u(c_->Statement(
            "SELECT column_name::text, data_type::text FROM information_schema.columns WHERE "
            "table_schema = current_schema() AND table_name::text = ? ORDER BY ordinal_position"));
        u.Bind(name);
        while (u.Next()) {
          auto type = PgColumnType(name, u.Text(0), u.Text(1));
          if (!type.ok()) return type.error();
          t.columns.push_back({u.Text(0), *type});
          types_[name][u.Text(0)] = u.Text(1);
        }
        if (!u.status().ok()) return u.status().error();
      }
      PgUse u(c_->Statement(
          "SELECT k.column_name::text FROM information_schema.table_constraints c JOIN "
          "information_schema.key_column_usage k ON k.constraint_schema = c.constraint_schema AND "
          "k.constraint_name = c.constraint_name AND k.table_name = c.table_name WHERE "
          "c.table_schema = current_schema() AND c.table_name::text = ? AND c.constraint_type = "
          "'PRIMARY KEY' ORDER BY k.ordinal_position"));
      u.Bind(name);
      auto key = AllRows(u, [](PgUse& row) { return row.Text(0); });
      if (!key.ok()) return key.error();
      auto keyed = WithKey(std::move(t), std::move(*key));
      if (!keyed.ok()) return keyed.error();
      out.push_back(std::move(*keyed));
    }
    return out;
  }

  // By binary COPY: each value in its column's exact type, as Tables() read it from the catalogue.
  Status Insert(const CopyTable& t, const std::vector<CopyRow>& rows) override {
    const auto& types = types_[t.name];
    PgBinaryCopy copy;
    for (const CopyRow& row : rows) {
      copy.Row(static_cast<std::int16_t>(row.size()));
      for (std::size_t i = 0; i < row.size(); ++i) {
        const auto type = types.find(t.columns[i].name);
        if (type == types.end()) {
          return MakeError(ErrorCode::kInternal,
                           "table " + t.name + " has no column " + t.columns[i].name);
        }
        if (Status s = Put(copy, type->second, row[i]); !s.ok()) {
          return MakeError(s.error().code, "table " + t.name + ", column " + t.columns[i].name +
                                               ": " + s.error().message);
        }
      }
    }
    // COPY cannot be prepared: its text names the table and columns (from the catalogue), every
    // value travels in the data.
    const std::string sql =
        "COPY " + Quote(t.name) + " (" + Joined(ColumnNames(t)) + ") FROM STDIN (FORMAT binary)";
    if (Status s = c_->CopyIn(sql, copy.Finish()); !s.ok()) {
      return MakeError(s.error().code, "copying into " + t.name + ": " + s.error().message);
    }
    return {};
  }

  // The samples counter counts the copied samples; each identity sequence goes past the largest
  // id copied; the planner's statistics are taken now rather than at autovacuum's leisure.
  Status FinishCopy() override {
    if (Status s = Exec("UPDATE samples_stored SET n = (SELECT COUNT(*) FROM samples)"); !s.ok()) {
      return s;
    }
    std::vector<std::pair<std::string, std::string>> identities;
    {
      PgUse u(c_->Statement(
          "SELECT table_name::text, column_name::text FROM information_schema.columns WHERE "
          "table_schema = current_schema() AND (is_identity = 'YES' OR column_default LIKE "
          "'nextval(%') ORDER BY table_name, column_name"));
      auto rows = AllRows(u, [](PgUse& row) { return std::make_pair(row.Text(0), row.Text(1)); });
      if (!rows.ok()) return rows.error();
      identities = std::move(*rows);
    }
    for (const auto& [table, column] : identities) {
      std::int64_t max = 0;
      {
        PgUse u(
            c_->Statement("SELECT COALESCE(MAX(" + Quote(column) + "), 0) FROM " + Quote(table)));
        auto m = FirstRow<std::int64_t>(
            u, [](PgUse& row) { return row.Int(0); }, std::int64_t{0});
        if (!m.ok()) return m.error();
        max = *m;
      }
      // setval(seq, max, true): the next id is max + 1; an empty table starts again at 1.
      PgUse u(c_->Statement("SELECT setval(pg_get_serial_sequence(?, ?), ?, ?)"));
      u.Bind(Quote(table)).Bind(column).Bind(std::max<std::int64_t>(max, 1)).Bind(max > 0);
      if (Status s = u.Exec("setting the sequence"); !s.ok()) {
        return MakeError(s.error().code, "table " + table + ": " + s.error().message);
      }
    }
    // ANALYZE cannot be prepared; it takes no values.
    return c_->ExecScript("ANALYZE");
  }

 private:
  // PostgreSQL keeps no order among a group's rows (samples have no id): any will do.
  std::string ScanTieBreak(const CopyTable&) const override { return ""; }

  static Status Put(PgBinaryCopy& copy, const std::string& type, const CopyValue& v) {
    auto out_of_range = [&] {
      return MakeError(ErrorCode::kInvalidArgument, "a value does not fit its type " + type);
    };
    if (std::holds_alternative<std::monostate>(v)) {
      copy.Null();
    } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
      if (type == "bigint") {
        copy.Int8(*i);
      } else if (type == "integer" && *i >= INT32_MIN && *i <= INT32_MAX) {
        copy.Int4(static_cast<std::int32_t>(*i));
      } else if (type == "smallint" && *i >= INT16_MIN && *i <= INT16_MAX) {
        copy.Int2(static_cast<std::int16_t>(*i));
      } else {
        return out_of_range();
      }
    } else if (const auto* d = std::get_if<double>(&v)) {
      if (type == "double precision") {
        copy.Float8(*d);
      } else if (type == "real") {
        copy.Float4(static_cast<float>(*d));
      } else {
        return out_of_range();
      }
    } else {
      const auto& text = std::get<std::string>(v);
      if (type != "text" && type != "character varying" && type != "character") {
        return out_of_range();
      }
      copy.Text(text);
    }
    return {};
  }

  // Each table's columns' types (information_schema's data_type), as Tables() read them.
  std::map<std::string, std::map<std::string, std::string>> types_;
};

}  // namespace

Result<std::unique_ptr<CopySide>> OpenSqliteCopySide(const std::filesystem::path& path,
                                                     std::string name) {
  auto c = OpenSqliteConnection(path);
  if (!c.ok()) return c.error();
  return std::unique_ptr<CopySide>(new SqliteCopySide(std::move(*c), std::move(name)));
}

Result<std::unique_ptr<CopySide>> OpenPgCopySide(const std::string& url, std::string name) {
  auto c = ConnectPostgres(url);
  if (!c.ok()) return c.error();
  return std::unique_ptr<CopySide>(new PgCopySide(std::move(*c), std::move(name)));
}

}  // namespace mculab::db
