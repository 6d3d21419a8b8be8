// SqliteStore: applying one write set in the writer's transaction.
#include <sqlite3.h>

#include "db/sql_statement.h"
#include "db/sql_util.h"
#include "db/sqlite_statements.h"
#include "db/sqlite_store.h"

namespace mculab::db {
namespace {

std::string JoinNames(const std::vector<std::string>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + v[i];
  return out;
}

// Prepares `sql` on `db` and runs `body` with a Use of it (rare writes and reads: the statement
// is prepared per call, which costs microseconds next to the transaction).
template <typename F>
Status WithStmt(sqlite3* db, const char* sql, F&& body) {
  Stmt s;
  if (Status st = s.Prepare(db, sql); !st.ok()) return st;
  return body(s);
}

}  // namespace

Status SqliteStore::ApplyWriteSet(const WriteSet& ws, bool* duplicate_batch) {
  Statements& w = *w_;
  for (const NewJob& n : ws.new_jobs) {
    const Job& job = n.job;
    {
      Use u(w.insert_job);
      u.Bind(job.id).Bind(job.user).Bind(job.kind).Bind(job.board).Bind(job.op).Bind(job.label);
      u.Bind(server::JobStateName(job.state)).Bind(job.iterations).Bind(job.warmup);
      u.Bind(job.num_cases).Bind(job.cases_artifact).Bind(job.timeout_s).Bind(job.attempts);
      u.Bind(job.created_ms).Bind(job.started_ms).Bind(job.finished_ms).Bind(job.message);
      u.Bind(job.assigned_board).Bind(job.last_run_id).Bind(server::JobPriorityName(job.priority));
      u.Bind(job.firmware_artifact).Bind(job.blob_artifact).Bind(TagsToJson(job.tags));
      u.Bind(server::JobOriginName(job.origin));
      if (Status s = u.Exec("storing job"); !s.ok()) return s;
    }
    for (std::size_t i = 0; i < n.cases.size(); ++i) {
      Use u(w.insert_case);
      u.Bind(job.id).Bind(static_cast<std::int64_t>(i)).Bind(n.cases[i].id);
      u.Bind(JoinInts(n.cases[i].params));
      if (Status s = u.Exec("storing job case"); !s.ok()) return s;
    }
  }
  if (ws.reserve_run_ids_to != 0) {
    Use u(w.reserve_ids);
    u.Bind(std::string("run")).Bind(ws.reserve_run_ids_to);
    if (Status s = u.Exec("reserving run ids"); !s.ok()) return s;
  }
  for (const Artifact& a : ws.artifacts) {
    Use u(w.insert_artifact);
    u.Bind(a.sha256).Bind(a.size).Bind(a.name).Bind(a.user).Bind(a.created_ms);
    if (Status s = u.Exec("storing artifact"); !s.ok()) return s;
  }
  for (const Board& b : ws.boards) {
    Use u(w.upsert_board);
    u.Bind(b.name).Bind(b.kind).Bind(b.agent).Bind(TagsToJson(b.tags)).Bind(b.emulated);
    u.Bind(b.serial).Bind(b.ram_bytes).Bind(server::BoardStateName(b.state));
    u.Bind(server::BoardHealthName(b.health)).Bind(b.current_job).Bind(b.updated_ms);
    u.Bind(b.holder).Bind(b.lease_until_ms).Bind(b.reservation_note).Bind(b.hold);
    u.Bind(b.health_failures).Bind(b.calibration);
    if (Status s = u.Exec("storing board"); !s.ok()) return s;
  }
  for (const Run& r : ws.runs) {
    const auto& p = r.provenance;
    Use u(w.upsert_run);
    u.Bind(r.id).Bind(r.job_id).Bind(r.attempt).Bind(r.board).Bind(r.agent);
    u.Bind(server::RunStateName(r.state)).Bind(r.created_ms).Bind(r.finished_ms).Bind(r.message);
    u.Bind(r.batches_expected).Bind(r.started).Bind(p.runner_version).Bind(p.port).Bind(p.cpu);
    u.Bind(p.clock_hz).Bind(p.emulated).Bind(p.timer_unit).Bind(JoinStrings(p.counters));
    u.Bind(p.firmware_sha256).Bind(p.workload_sha256).Bind(p.toolchain).Bind(p.board_serial);
    u.Bind(p.note).Bind(p.seed);
    if (Status s = u.Exec("storing run"); !s.ok()) return s;
  }
  for (const Job& j : ws.jobs) {
    Use u(w.update_job);
    u.Bind(server::JobStateName(j.state)).Bind(j.attempts).Bind(j.started_ms);
    u.Bind(j.finished_ms).Bind(j.message).Bind(j.assigned_board).Bind(j.last_run_id).Bind(j.id);
    if (Status s = u.Exec("updating job"); !s.ok()) return s;
  }
  for (const JobTransition& t : ws.transitions) {
    Use u(w.insert_transition);
    u.Bind(t.job_id).Bind(t.from).Bind(t.to).Bind(t.reason).Bind(t.actor).Bind(t.time_ms);
    if (Status s = u.Exec("storing job transition"); !s.ok()) return s;
  }
  for (const BoardTransition& t : ws.board_transitions) {
    Use u(w.insert_board_transition);
    u.Bind(t.board).Bind(t.field).Bind(t.from).Bind(t.to).Bind(t.reason).Bind(t.actor);
    u.Bind(t.time_ms);
    if (Status s = u.Exec("storing board transition"); !s.ok()) return s;
  }
  for (const CaseResult& c : ws.case_results) {
    Use u(w.upsert_case_result);
    u.Bind(c.run_id).Bind(c.case_index).Bind(c.checksum).Bind(c.expected).Bind(c.ok);
    u.Bind(c.overhead);
    if (Status s = u.Exec("storing case result"); !s.ok()) return s;
  }
  for (const CaseStats& c : ws.case_stats) {
    Use u(w.upsert_case_stats);
    u.Bind(c.job_id).Bind(c.case_index).Bind(c.metric_index).Bind(c.run_id).Bind(c.metric);
    u.Bind(c.unit).Bind(c.n).Bind(c.min).Bind(c.median).Bind(c.mean).Bind(c.p90).Bind(c.p99);
    u.Bind(c.stddev).Bind(c.cv).Bind(c.max);
    if (Status s = u.Exec("storing case statistics"); !s.ok()) return s;
  }
  if (Status s = ApplyProfileWrites(ws); !s.ok()) return s;
  if (ws.batch) {
    const SampleBatch& b = *ws.batch;
    {
      Use u(w.insert_batch);
      u.Bind(b.run_id).Bind(b.sequence);
      if (Status s = u.Exec("storing batch"); !s.ok()) return s;
    }
    if (sqlite3_changes(wdb_) == 0) {
      *duplicate_batch = true;
      return {};
    }
    const std::size_t n = b.samples.size();
    std::size_t i = 0;
    for (; i + kSamplesPerInsert <= n; i += kSamplesPerInsert) {
      Use u(w.insert_samples_multi);
      for (std::size_t k = i; k < i + kSamplesPerInsert; ++k) {
        const Sample& s = b.samples[k];
        u.Bind(b.run_id).Bind(s.pass).Bind(s.case_index).Bind(s.iteration).Bind(s.metric);
        u.Bind(s.value);
      }
      if (Status s = u.Exec("storing samples"); !s.ok()) return s;
    }
    for (; i < n; ++i) {
      const Sample& s = b.samples[i];
      Use u(w.insert_sample);
      u.Bind(b.run_id).Bind(s.pass).Bind(s.case_index).Bind(s.iteration).Bind(s.metric);
      u.Bind(s.value);
      if (Status st = u.Exec("storing sample"); !st.ok()) return st;
    }
    if (b.iterations > 0) {
      Use u(w.add_progress);
      u.Bind(b.iterations).Bind(b.run_id);
      if (Status s = u.Exec("updating run progress"); !s.ok()) return s;
    }
  }
  return {};
}

Status SqliteStore::ApplyProfileWrites(const WriteSet& ws) {
  for (const JobEvents& e : ws.job_events) {
    Status st = WithStmt(wdb_, "INSERT OR REPLACE INTO job_events(job_id, events) VALUES(?,?)",
                         [&](Stmt& s) {
                           Use u(s);
                           u.Bind(e.job_id).Bind(JoinNames(e.events));
                           return u.Exec("storing a job's events");
                         });
    if (!st.ok()) return st;
  }
  for (const BoardUnits& b : ws.board_units) {
    Status st = WithStmt(wdb_, "DELETE FROM board_counter_units WHERE board = ?", [&](Stmt& s) {
      Use u(s);
      u.Bind(b.board);
      return u.Exec("replacing a board's counter units");
    });
    if (!st.ok()) return st;
    for (std::size_t i = 0; i < b.units.size(); ++i) {
      const server::CounterUnit& unit = b.units[i];
      st = WithStmt(wdb_,
                    "INSERT INTO board_counter_units(board, position, unit, max_simultaneous, "
                    "events, emulated) VALUES(?,?,?,?,?,?)",
                    [&](Stmt& s) {
                      Use u(s);
                      u.Bind(b.board).Bind(static_cast<std::uint64_t>(i)).Bind(unit.name);
                      u.Bind(unit.max_simultaneous).Bind(JoinNames(unit.events));
                      u.Bind(i < b.emulated.size() && b.emulated[i]);
                      return u.Exec("storing a board's counter unit");
                    });
      if (!st.ok()) return st;
    }
  }
  for (const RunPass& p : ws.run_passes) {
    Status st =
        WithStmt(wdb_, "INSERT OR REPLACE INTO run_passes(run_id, pass, events) VALUES(?,?,?)",
                 [&](Stmt& s) {
                   Use u(s);
                   u.Bind(p.run_id).Bind(p.pass).Bind(JoinNames(p.events));
                   return u.Exec("storing a run's pass");
                 });
    if (!st.ok()) return st;
  }
  if (!ws.op_profiles.empty()) {
    Stmt s;
    if (Status st = s.Prepare(wdb_,
                              "INSERT OR REPLACE INTO op_profiles(run_id, pass, case_index, "
                              "op_index, metric, op_type, op_name, count, sum, min, max, unclosed) "
                              "VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
        !st.ok()) {
      return st;
    }
    for (const OpProfileRow& o : ws.op_profiles) {
      Use u(s);
      u.Bind(o.run_id).Bind(o.pass).Bind(o.case_index).Bind(o.op_index).Bind(o.metric);
      u.Bind(o.type).Bind(o.name).Bind(o.count).Bind(o.sum).Bind(o.min).Bind(o.max);
      u.Bind(o.unclosed);
      if (Status st = u.Exec("storing an op profile"); !st.ok()) return st;
    }
  }
  if (!ws.memory.empty()) {
    Stmt s;
    if (Status st = s.Prepare(wdb_,
                              "INSERT OR REPLACE INTO memory_reports(run_id, case_index, source, "
                              "category, used, reserved) VALUES(?,?,?,?,?,?)");
        !st.ok()) {
      return st;
    }
    for (const MemoryFigure& m : ws.memory) {
      Use u(s);
      u.Bind(m.run_id).Bind(static_cast<std::int64_t>(m.case_index)).Bind(m.source);
      u.Bind(m.category).Bind(m.used).Bind(m.reserved);
      if (Status st = u.Exec("storing a memory figure"); !st.ok()) return st;
    }
  }
  if (!ws.deleted_artifacts.empty()) {
    Stmt s;
    if (Status st = s.Prepare(wdb_, "DELETE FROM artifacts WHERE sha256 = ?"); !st.ok()) return st;
    for (const std::string& sha : ws.deleted_artifacts) {
      Use u(s);
      u.Bind(sha);
      if (Status st = u.Exec("deleting an artifact"); !st.ok()) return st;
    }
  }
  return {};
}

}  // namespace mculab::db
