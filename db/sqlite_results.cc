// SqliteStore's reads of a run's samples that use SQLite's rowid: scanning a run in case order,
// and the samples counter.
#include <algorithm>

#include "db/sql_statement.h"
#include "db/sqlite_store.h"
#include "db/store_rows.h"

namespace mculab::db {

// A run's rows in the order they were stored are usually in case order already: one pass, its
// cases run and their batches committed one after another. Then each case is read, grouped by
// metric and handed on without a sort: SQLite's ORDER BY over a run (a sorter over every row)
// cost about 60 % of reading it back (callgrind: ≈ 4,500 instructions a row against ≈ 1,150 for
// the check below plus ≈ 1,800 for the read). Otherwise (several passes, a batch stored out of
// case order, a case too large to hold) SQLite sorts. Both give (case_index, metric, pass) order.
Status SqliteStore::ScanSamples(RunId run,
                                const std::function<void(std::span<const Sample>)>& chunk) {
  constexpr std::size_t kChunk = 4096;
  // The most rows of one case held at once (24 bytes each): a larger case is sorted by SQLite.
  constexpr std::size_t kMaxCaseRows = std::size_t{1} << 20;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Connection& c = read->connection();
  // Whether the stored order is case order, up to the last row seen now (rows stored meanwhile
  // are left to the next scan, as a sorted read would).
  bool in_case_order = true;
  std::int64_t last_rowid = 0;
  {
    Use u(
        c.Statement("SELECT rowid, pass, case_index FROM samples WHERE run_id = ? ORDER BY rowid"));
    u.Bind(run);
    bool first = true;
    std::uint32_t pass = 0, case_index = 0;
    std::size_t case_rows = 0;
    while (in_case_order && u.Next()) {
      last_rowid = u.Int(0);
      const std::uint32_t p = u.U32(1), k = u.U32(2);
      if (first || k != case_index) case_rows = 0;
      in_case_order = first || (p == pass && k >= case_index);
      in_case_order = in_case_order && ++case_rows <= kMaxCaseRows;
      first = false;
      pass = p;
      case_index = k;
    }
    if (!u.status().ok()) return u.status();
  }
  std::vector<Sample> buf;
  auto hand_on = [&] {
    for (std::size_t i = 0; i < buf.size(); i += kChunk) {
      chunk(std::span<const Sample>(buf).subspan(i, std::min(kChunk, buf.size() - i)));
    }
    buf.clear();
  };
  if (in_case_order) {
    auto by_metric = [](const Sample& a, const Sample& b) { return a.metric < b.metric; };
    auto hand_on_case = [&] {
      if (!std::is_sorted(buf.begin(), buf.end(), by_metric)) {
        std::stable_sort(buf.begin(), buf.end(), by_metric);
      }
      hand_on();
    };
    Use u(c.Statement(
        "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ? "
        "AND rowid <= ? ORDER BY rowid"));
    u.Bind(run).Bind(last_rowid);
    while (u.Next()) {
      Sample s = ReadSample(u);
      if (!buf.empty() && s.case_index != buf.back().case_index) hand_on_case();
      buf.push_back(s);
    }
    if (!u.status().ok()) return u.status();
    hand_on_case();
    return {};
  }
  Use u(c.Statement(kSamplesInCaseOrderSql));
  u.Bind(run);
  return HandOnSamples(u, chunk, kChunk);
}

Result<std::uint64_t> SqliteStore::SamplesStored() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  // Samples are only ever appended, so the largest rowid counts them without a table scan.
  Use u(read->connection().Statement("SELECT COALESCE(MAX(rowid), 0) FROM samples"));
  return FirstRow<std::uint64_t>(u, ReadCount<Use>, std::uint64_t{0});
}

}  // namespace mculab::db
