// SqliteStore reads of results: samples, batches, case results and statistics, passes, op
// profiles, memory.
#include <sqlite3.h>

#include <algorithm>
#include <tuple>

#include "db/sql_statement.h"
#include "db/sqlite_statements.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

std::vector<std::string> SplitNames(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < s.size()) {
    std::size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

Result<std::vector<Sample>> SqliteStore::GetSamples(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_samples);
  u.Bind(run);
  std::vector<Sample> out;
  while (u.Next()) {
    out.push_back(Sample{u.U32(0), u.U32(1), u.U32(2), u.U32(3), u.Int(4)});
  }
  if (!u.status().ok()) return u.status().error();
  std::sort(out.begin(), out.end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.pass, a.case_index, a.metric, a.iteration) <
           std::tie(b.pass, b.case_index, b.metric, b.iteration);
  });
  return out;
}

Status SqliteStore::ScanSamples(RunId run,
                                const std::function<void(std::span<const Sample>)>& chunk) {
  constexpr std::size_t kChunk = 4096;
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().scan_samples);
  u.Bind(run);
  std::vector<Sample> buf;
  buf.reserve(kChunk);
  while (u.Next()) {
    buf.push_back(Sample{u.U32(0), u.U32(1), u.U32(2), u.U32(3), u.Int(4)});
    if (buf.size() == kChunk) {
      chunk(buf);
      buf.clear();
    }
  }
  if (!u.status().ok()) return u.status();
  if (!buf.empty()) chunk(buf);
  return {};
}

Result<std::uint64_t> SqliteStore::CountSamples(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().count_samples);
  u.Bind(run);
  if (!u.Next())
    return u.status().ok() ? std::uint64_t{0} : Result<std::uint64_t>(u.status().error());
  return u.UInt(0);
}

Result<std::vector<std::uint64_t>> SqliteStore::ListBatchSequences(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_batches);
  u.Bind(run);
  std::vector<std::uint64_t> out;
  while (u.Next()) out.push_back(u.UInt(0));
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<CaseResult>> SqliteStore::GetCaseResults(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_case_results);
  u.Bind(run);
  std::vector<CaseResult> out;
  while (u.Next()) {
    out.push_back(CaseResult{u.Int(0), u.U32(1), u.U32(2), u.U32(3), u.Bool(4), u.Int(5)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<CaseStats>> SqliteStore::GetCaseStats(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_case_stats);
  u.Bind(job);
  std::vector<CaseStats> out;
  while (u.Next()) {
    CaseStats c;
    c.job_id = u.Int(0);
    c.run_id = u.Int(1);
    c.case_index = u.U32(2);
    c.metric_index = u.U32(3);
    c.metric = u.Text(4);
    c.unit = u.Text(5);
    c.n = u.UInt(6);
    c.min = u.Real(7);
    c.median = u.Real(8);
    c.mean = u.Real(9);
    c.p90 = u.Real(10);
    c.p99 = u.Real(11);
    c.stddev = u.Real(12);
    c.cv = u.Real(13);
    c.max = u.Real(14);
    out.push_back(std::move(c));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<SeriesPoint>> SqliteStore::GetCaseSeries(RunId run, std::uint32_t pass,
                                                            std::uint32_t case_index,
                                                            std::uint32_t metric) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT iteration, value FROM samples WHERE run_id = ? AND pass = ? "
                            "AND case_index = ? AND metric = ? ORDER BY iteration");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run).Bind(pass).Bind(case_index).Bind(metric);
  std::vector<SeriesPoint> out;
  while (u.Next()) out.push_back(SeriesPoint{u.U32(0), u.Int(1)});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::uint64_t> SqliteStore::SamplesStored() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  // Samples are only ever appended, so the largest rowid counts them without a table scan.
  if (Status st = s.Prepare(read->db(), "SELECT COALESCE(MAX(rowid), 0) FROM samples"); !st.ok()) {
    return st.error();
  }
  Use u(s);
  if (!u.Next()) {
    return u.status().ok() ? std::uint64_t{0} : Result<std::uint64_t>(u.status().error());
  }
  return u.UInt(0);
}

Result<JobEvents> SqliteStore::GetJobEvents(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(), "SELECT events FROM job_events WHERE job_id = ?");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(job);
  JobEvents out;
  out.job_id = job;
  if (u.Next()) out.events = SplitNames(u.Text(0));
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<BoardUnits>> SqliteStore::ListBoardUnits() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT board, unit, max_simultaneous, events, emulated FROM "
                            "board_counter_units ORDER BY board, position");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  std::vector<BoardUnits> out;
  while (u.Next()) {
    std::string board = u.Text(0);
    if (out.empty() || out.back().board != board) out.push_back(BoardUnits{board, {}, {}});
    server::CounterUnit unit;
    unit.name = u.Text(1);
    unit.max_simultaneous = u.U32(2);
    unit.events = SplitNames(u.Text(3));
    out.back().units.push_back(std::move(unit));
    out.back().emulated.push_back(u.Bool(4));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<RunPass>> SqliteStore::GetRunPasses(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT pass, events FROM run_passes WHERE run_id = ? ORDER BY pass");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run);
  std::vector<RunPass> out;
  while (u.Next()) out.push_back(RunPass{run, u.U32(0), SplitNames(u.Text(1))});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<OpProfileRow>> SqliteStore::GetOpProfiles(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st = s.Prepare(read->db(),
                            "SELECT pass, case_index, op_index, metric, op_type, op_name, count, "
                            "sum, min, max, unclosed FROM op_profiles WHERE run_id = ? "
                            "ORDER BY pass, case_index, op_index, metric");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run);
  std::vector<OpProfileRow> out;
  while (u.Next()) {
    OpProfileRow o;
    o.run_id = run;
    o.pass = u.U32(0);
    o.case_index = u.U32(1);
    o.op_index = u.U32(2);
    o.metric = u.U32(3);
    o.type = u.Text(4);
    o.name = u.Text(5);
    o.count = u.UInt(6);
    o.sum = u.UInt(7);
    o.min = u.UInt(8);
    o.max = u.UInt(9);
    o.unclosed = u.Bool(10);
    out.push_back(std::move(o));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<MemoryFigure>> SqliteStore::GetMemory(RunId run) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Stmt s;
  if (Status st =
          s.Prepare(read->db(),
                    "SELECT case_index, source, category, used, reserved FROM "
                    "memory_reports WHERE run_id = ? ORDER BY case_index, source, category");
      !st.ok()) {
    return st.error();
  }
  Use u(s);
  u.Bind(run);
  std::vector<MemoryFigure> out;
  while (u.Next()) {
    out.push_back(MemoryFigure{run, static_cast<std::int32_t>(u.Int(0)), u.Text(1), u.Text(2),
                               u.UInt(3), u.UInt(4)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

}  // namespace mculab::db
