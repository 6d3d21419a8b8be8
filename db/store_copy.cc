#include "db/store_copy.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "db/lab_store.h"
#include "db/store_copy_sides.h"

namespace mculab::db {
namespace {

// The order tables are copied in: what a row refers to before the row (accounts, uploads, boards,
// jobs, runs, then what hangs off runs). A table not named here (added by a later migration) comes
// after these, by name.
constexpr const char* kCopyOrder[] = {"users",
                                      "tokens",
                                      "artifacts",
                                      "artifact_owners",
                                      "boards",
                                      "board_counter_units",
                                      "board_transitions",
                                      "id_reservations",
                                      "jobs",
                                      "job_cases",
                                      "job_events",
                                      "job_transitions",
                                      "runs",
                                      "run_passes",
                                      "batches",
                                      "samples",
                                      "case_results",
                                      "case_stats",
                                      "op_profiles",
                                      "memory_reports",
                                      "follows"};

std::size_t OrderOf(const std::string& table) {
  const auto* end = std::end(kCopyOrder);
  return static_cast<std::size_t>(std::find(std::begin(kCopyOrder), end, table) -
                                  std::begin(kCopyOrder));
}

Error Prefixed(const char* side, const Error& e) {
  return MakeError(e.code, std::string(side) + ": " + e.message);
}

// The side of the copy on store `url`, migrated to this build's latest schema. The source must
// exist already: opening a SQLite store would create an empty one.
Result<std::unique_ptr<CopySide>> OpenSide(const char* side, const std::string& url,
                                           const StoreCopyOptions& options, bool source) {
  auto where = LocateStore(url, options.home);
  if (!where.ok()) return Prefixed(side, where.error());
  const std::string name = url.empty() ? std::string("sqlite:mculab.db") : RedactStoreUrl(url);
  if (source && !where->postgres && !std::filesystem::exists(where->sqlite_path)) {
    return MakeError(ErrorCode::kNotFound, std::string(side) + ": no database file at " +
                                               where->sqlite_path.string() + " (" + name + ")");
  }
  {
    auto store = OpenStore(url, options.home);
    if (!store.ok()) return Prefixed(side, store.error());
    (*store)->Close();
  }
  auto opened =
      where->postgres ? OpenPgCopySide(url, name) : OpenSqliteCopySide(where->sqlite_path, name);
  if (!opened.ok()) return Prefixed(side, opened.error());
  return opened;
}

bool SameStore(const std::string& from, const std::string& to, const StoreCopyOptions& options) {
  auto a = LocateStore(from, options.home);
  auto b = LocateStore(to, options.home);
  if (!a.ok() || !b.ok() || a->postgres != b->postgres) return false;
  if (a->postgres) return a->url == b->url;
  std::error_code ec;
  return std::filesystem::equivalent(a->sqlite_path, b->sqlite_path, ec) ||
         a->sqlite_path.lexically_normal() == b->sqlite_path.lexically_normal();
}

// The source's tables in copy order, each checked against the destination's table of that name:
// the same columns of the same types and the same key, and no table on one side only.
Result<std::vector<CopyTable>> MatchTables(CopySide& source, CopySide& destination) {
  auto from = source.Tables();
  if (!from.ok()) return Prefixed("source", from.error());
  auto to = destination.Tables();
  if (!to.ok()) return Prefixed("destination", to.error());
  auto differ = [](const std::string& table, const std::string& what) {
    return MakeError(ErrorCode::kFailedPrecondition,
                     "the two stores' schemas differ at table " + table + " (" + what +
                         "), though both are at this build's latest migration: a migration of "
                         "one backend lacks its counterpart in the other");
  };
  for (const CopyTable& d : *to) {
    if (std::none_of(from->begin(), from->end(),
                     [&](const CopyTable& s) { return s.name == d.name; })) {
      return differ(d.name, "only the destination has it");
    }
  }
  for (const CopyTable& s : *from) {
    auto d =
        std::find_if(to->begin(), to->end(), [&](const CopyTable& t) { return t.name == s.name; });
    if (d == to->end()) return differ(s.name, "only the source has it");
    std::vector<CopyColumn> a = s.columns, b = d->columns;
    auto by_name = [](const CopyColumn& x, const CopyColumn& y) { return x.name < y.name; };
    std::sort(a.begin(), a.end(), by_name);
    std::sort(b.begin(), b.end(), by_name);
    if (a != b) return differ(s.name, "their columns or the columns' types");
    if (s.key != d->key) return differ(s.name, "their primary keys");
  }
  std::vector<CopyTable> out = std::move(*from);
  std::stable_sort(out.begin(), out.end(), [](const CopyTable& a, const CopyTable& b) {
    return std::make_pair(OrderOf(a.name), a.name) < std::make_pair(OrderOf(b.name), b.name);
  });
  return out;
}

struct TablePlan {
  CopyTable table;
  std::uint64_t total = 0;       // the source's rows
  std::uint64_t have = 0;        // the destination's rows before this run
  std::optional<CopyRow> after;  // the destination's last key: copy what comes after it
};

Error Refused(const CopySide& destination, const std::string& table, const std::string& why) {
  return MakeError(ErrorCode::kFailedPrecondition,
                   "destination " + destination.name() +
                       " already holds lab data that is not "
                       "(the beginning of) a copy of this source: table " +
                       table + " " + why +
                       ". Give an empty database, or the one an interrupted migrate-store from the "
                       "same source left");
}

// Where each table's copy stands: the destination's rows must be what an interrupted copy of this
// source left (see store_copy.h), else the copy is refused before anything is written.
Result<std::vector<TablePlan>> Plan(CopySide& source, CopySide& destination,
                                    std::vector<CopyTable> tables) {
  std::vector<TablePlan> plans;
  std::string incomplete;  // the first table not yet copied whole
  for (CopyTable& t : tables) {
    TablePlan p;
    auto total = source.Count(t);
    if (!total.ok()) return Prefixed("source", total.error());
    auto have = destination.Count(t);
    if (!have.ok()) return Prefixed("destination", have.error());
    p.total = *total;
    p.have = *have;
    if (p.have > 0) {
      if (!incomplete.empty()) {
        return Refused(
            destination, t.name,
            "has rows though the copy of the table before it, " + incomplete + ", is not complete");
      }
      auto last = destination.LastKey(t);
      if (!last.ok()) return Prefixed("destination", last.error());
      auto up_to = source.CountUpTo(t, **last);
      if (!up_to.ok()) return Prefixed("source", up_to.error());
      if (*up_to != p.have) {
        return Refused(destination, t.name,
                       "has " + std::to_string(p.have) + " rows where the source has " +
                           std::to_string(*up_to) + " up to the same key");
      }
      if (!t.grouped) {
        auto mine = destination.RowAt(t, **last);
        if (!mine.ok()) return Prefixed("destination", mine.error());
        auto theirs = source.RowAt(t, **last);
        if (!theirs.ok()) return Prefixed("source", theirs.error());
        if (*mine != *theirs) {
          return Refused(destination, t.name, "has a row that differs from the source's");
        }
      }
      p.after = std::move(*last);
    }
    if (p.have < p.total && incomplete.empty()) incomplete = t.name;
    p.table = std::move(t);
    plans.push_back(std::move(p));
  }
  return plans;
}

// Copies one table's rows after plan.after, in transactions of about batch_rows rows (a grouped
// table's transaction ends with a group). `batches` counts the transactions committed by the
// whole copy, for the test hook.
Status CopyTableRows(CopySide& source, CopySide& destination, const TablePlan& plan,
                     const StoreCopyOptions& options, std::size_t& batches, std::uint64_t& copied) {
  const CopyTable& t = plan.table;
  const std::size_t batch_rows = std::max<std::size_t>(options.batch_rows, 1);
  const std::size_t pending_rows = std::min<std::size_t>(batch_rows, 5'000);
  std::size_t group_column = 0;
  if (t.grouped) {
    group_column = static_cast<std::size_t>(
        std::find_if(t.columns.begin(), t.columns.end(),
                     [&](const CopyColumn& c) { return c.name == t.key.front(); }) -
        t.columns.begin());
  }
  std::vector<CopyRow> pending;
  bool in_transaction = false;
  std::size_t transaction_rows = 0;
  std::optional<CopyValue> group;
  auto flush = [&]() -> Status {
    if (pending.empty()) return {};
    Status s = destination.Insert(t, pending);
    pending.clear();
    return s;
  };
  auto commit = [&]() -> Status {
    if (Status s = flush(); !s.ok()) return s;
    if (Status s = destination.Commit(); !s.ok()) return s;
    in_transaction = false;
    copied += transaction_rows;
    transaction_rows = 0;
    ++batches;
    if (options.progress && plan.total > batch_rows) {
      options.progress({t.name, plan.have + copied, plan.total});
    }
    if (options.stop_after_batches > 0 && batches >= options.stop_after_batches) {
      return MakeError(ErrorCode::kCancelled,
                       "stopped after " + std::to_string(batches) + " batches (test hook)");
    }
    return {};
  };
  Status s = source.Scan(t, plan.after, [&](CopyRow&& row) -> Status {
    const bool new_group = !t.grouped || !group || row[group_column] != *group;
    if (in_transaction && transaction_rows >= batch_rows && new_group) {
      if (Status c = commit(); !c.ok()) return c;
    }
    if (!in_transaction) {
      if (Status b = destination.Begin(); !b.ok()) return b;
      in_transaction = true;
    }
    if (t.grouped) group = row[group_column];
    pending.push_back(std::move(row));
    ++transaction_rows;
    return pending.size() >= pending_rows ? flush() : Status();
  });
  if (s.ok() && in_transaction) s = commit();
  if (!s.ok() && in_transaction) destination.Rollback();
  return s;
}

}  // namespace

Result<StoreCopyReport> CopyStore(const std::string& from, const std::string& to,
                                  const StoreCopyOptions& options) {
  if (SameStore(from, to, options)) {
    return MakeError(
        ErrorCode::kInvalidArgument,
        "the source and the destination are the same store (" + RedactStoreUrl(from) + ")");
  }
  auto source = OpenSide("source", from, options, true);
  if (!source.ok()) return source.error();
  auto destination = OpenSide("destination", to, options, false);
  if (!destination.ok()) return destination.error();
  CopySide& src = **source;
  CopySide& dst = **destination;

  auto tables = MatchTables(src, dst);
  if (!tables.ok()) return tables.error();
  if (Status s = src.BeginSnapshot(); !s.ok()) return Prefixed("source", s.error());
  auto plans = Plan(src, dst, std::move(*tables));
  if (!plans.ok()) return plans.error();

  StoreCopyReport report;
  std::size_t batches = 0;
  for (const TablePlan& plan : *plans) {
    std::uint64_t copied = 0;
    if (Status s = CopyTableRows(src, dst, plan, options, batches, copied); !s.ok()) {
      if (s.error().code == ErrorCode::kCancelled) return s.error();
      return MakeError(s.error().code, "copying table " + plan.table.name + ": " +
                                           RedactPasswords(s.error().message, to));
    }
    report.tables.push_back({plan.table.name, 0, 0, copied});
  }
  if (Status s = dst.FinishCopy(); !s.ok()) return Prefixed("destination", s.error());

  for (TableCount& c : report.tables) {
    const auto plan = std::find_if(plans->begin(), plans->end(),
                                   [&](const TablePlan& p) { return p.table.name == c.table; });
    auto a = src.Count(plan->table);
    if (!a.ok()) return Prefixed("source", a.error());
    auto b = dst.Count(plan->table);
    if (!b.ok()) return Prefixed("destination", b.error());
    c.source = *a;
    c.destination = *b;
    if (c.source != c.destination && report.status.ok()) {
      report.status = MakeError(ErrorCode::kDataLoss,
                                "table " + c.table + " has " + std::to_string(c.source) +
                                    " rows in the source but " + std::to_string(c.destination) +
                                    " in the destination");
    }
  }
  if (Status s = src.EndSnapshot(); !s.ok()) return Prefixed("source", s.error());
  return report;
}

}  // namespace mculab::db
