// SqliteStore reads of results: samples, batches, case results and statistics, passes, op
// profiles, memory.
#include <algorithm>
#include <tuple>

#include "db/sql_statement.h"
#include "db/sql_util.h"
#include "db/sqlite_store.h"
#include "db/store_rows.h"

namespace mculab::db {
Result<std::vector<Sample>> SqliteStore::GetSamples(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ?"));
  u.Bind(run);
  auto out = AllRows(u, ReadSample<Use>);
  if (!out.ok()) return out;
  std::sort(out->begin(), out->end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.pass, a.case_index, a.metric, a.iteration) <
           std::tie(b.pass, b.case_index, b.metric, b.iteration);
  });
  return out;
}

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
  Use u(
      c.Statement("SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ? "
                  "ORDER BY case_index, metric, pass"));
  u.Bind(run);
  buf.reserve(kChunk);
  while (u.Next()) {
    buf.push_back(ReadSample(u));
    if (buf.size() == kChunk) hand_on();
  }
  if (!u.status().ok()) return u.status();
  hand_on();
  return {};
}

Result<std::uint64_t> SqliteStore::CountSamples(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT COUNT(*) FROM samples WHERE run_id = ?"));
  u.Bind(run);
  return FirstRow<std::uint64_t>(u, ReadCount<Use>, std::uint64_t{0});
}

Result<std::vector<std::uint64_t>> SqliteStore::ListBatchSequences(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT sequence FROM batches WHERE run_id = ? ORDER BY sequence"));
  u.Bind(run);
  return AllRows(u, ReadCount<Use>);
}

Result<std::vector<CaseResult>> SqliteStore::GetCaseResults(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT run_id, case_index, checksum, expected, ok, overhead FROM case_results "
      "WHERE run_id = ? ORDER BY case_index"));
  u.Bind(run);
  return AllRows(u, ReadCaseResult<Use>);
}

Result<std::vector<CaseStats>> SqliteStore::GetCaseStats(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  static const std::string kSql = std::string("SELECT ") + kCaseStatsCols +
                                  " FROM case_stats WHERE job_id = ? "
                                  "ORDER BY case_index, metric_index";
  Use u(read->connection().Statement(kSql));
  u.Bind(job);
  return AllRows(u, [](Use& row) { return ReadCaseStats(row); });
}

Result<std::map<std::uint32_t, std::vector<double>>> SqliteStore::GetMetricValues(
    RunId run, std::uint32_t metric, std::optional<std::uint32_t> case_index) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  // No ORDER BY: the rows are read in the run index's order, with no sort and no second pass.
  Use u(read->connection().Statement(
      case_index ? "SELECT case_index, value FROM samples WHERE run_id = ? AND metric = ? "
                   "AND case_index = ?"
                 : "SELECT case_index, value FROM samples WHERE run_id = ? AND metric = ?"));
  u.Bind(run).Bind(metric);
  if (case_index) u.Bind(*case_index);
  std::map<std::uint32_t, std::vector<double>> out;
  std::vector<double>* values = nullptr;
  std::uint32_t current = 0;
  while (u.Next()) {
    const std::uint32_t k = u.U32(0);
    if (values == nullptr || k != current) {
      values = &out[k];
      current = k;
    }
    values->push_back(static_cast<double>(u.Int(1)));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<SeriesPoint>> SqliteStore::GetCaseSeries(RunId run, std::uint32_t pass,
                                                            std::uint32_t case_index,
                                                            std::uint32_t metric) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT iteration, value FROM samples WHERE run_id = ? AND pass = ? AND case_index = ? "
      "AND metric = ? ORDER BY iteration"));
  u.Bind(run).Bind(pass).Bind(case_index).Bind(metric);
  return AllRows(u, [](Use& row) { return SeriesPoint{row.U32(0), row.Int(1)}; });
}

Result<std::uint64_t> SqliteStore::SamplesStored() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  // Samples are only ever appended, so the largest rowid counts them without a table scan.
  Use u(read->connection().Statement("SELECT COALESCE(MAX(rowid), 0) FROM samples"));
  return FirstRow<std::uint64_t>(u, ReadCount<Use>, std::uint64_t{0});
}

// ---- events, passes, op profiles, memory (migration 0005) ----------------------------

Result<JobEvents> SqliteStore::GetJobEvents(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT events FROM job_events WHERE job_id = ?"));
  u.Bind(job);
  return FirstRow<JobEvents>(
      u,
      [job](Use& row) {
        return JobEvents{job, SplitStrings(row.Text(0))};
      },
      JobEvents{job, {}});
}

Result<std::vector<BoardUnits>> SqliteStore::ListBoardUnits() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT board, unit, max_simultaneous, events, emulated FROM board_counter_units "
      "ORDER BY board, position"));
  std::vector<BoardUnits> out;
  while (u.Next()) {
    std::string board = u.Text(0);
    if (out.empty() || out.back().board != board) out.push_back(BoardUnits{board, {}, {}});
    server::CounterUnit unit;
    unit.name = u.Text(1);
    unit.max_simultaneous = u.U32(2);
    unit.events = SplitStrings(u.Text(3));
    out.back().units.push_back(std::move(unit));
    out.back().emulated.push_back(u.Bool(4));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<RunPass>> SqliteStore::GetRunPasses(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT pass, events FROM run_passes WHERE run_id = ? ORDER BY pass"));
  u.Bind(run);
  return AllRows(u, [run](Use& row) {
    return RunPass{run, row.U32(0), SplitStrings(row.Text(1))};
  });
}

Result<std::vector<OpProfileRow>> SqliteStore::GetOpProfiles(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT pass, case_index, op_index, metric, op_type, op_name, count, sum, min, max, "
      "unclosed FROM op_profiles WHERE run_id = ? ORDER BY pass, case_index, op_index, metric"));
  u.Bind(run);
  return AllRows(u, [run](Use& row) {
    OpProfileRow o;
    o.run_id = run;
    o.pass = row.U32(0);
    o.case_index = row.U32(1);
    o.op_index = row.U32(2);
    o.metric = row.U32(3);
    o.type = row.Text(4);
    o.name = row.Text(5);
    o.count = row.UInt(6);
    o.sum = row.UInt(7);
    o.min = row.UInt(8);
    o.max = row.UInt(9);
    o.unclosed = row.Bool(10);
    return o;
  });
}

Result<std::vector<MemoryFigure>> SqliteStore::GetMemory(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT case_index, source, category, used, reserved FROM memory_reports WHERE run_id = ? "
      "ORDER BY case_index, source, category"));
  u.Bind(run);
  return AllRows(u, [run](Use& row) {
    return MemoryFigure{run,         static_cast<std::int32_t>(row.Int(0)),
                        row.Text(1), row.Text(2),
                        row.UInt(3), row.UInt(4)};
  });
}

}  // namespace mculab::db
