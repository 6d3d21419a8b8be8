// Applying one write set in the writer's transaction, on either store's writer connection (SQLite:
// db/sql_statement.h's Connection; PostgreSQL: db/pg_statement.h's PgConnection): the same SQL on
// both, every value bound. Only the samples go in the backend's own way (multi-row INSERT, COPY).
// db-internal.
#pragma once

#include <string>

#include "db/sql_util.h"
#include "server/service/store.h"

namespace mculab::db {

using server::Artifact;
using server::ArtifactSharing;
using server::BoardTransition;
using server::BoardUnits;
using server::JobEvents;
using server::JobTransition;
using server::MemoryFigure;
using server::NewJob;
using server::OpProfileRow;
using server::RunPass;
using server::SampleBatch;
using server::WriteOutcome;
using server::WriteSet;

inline const std::string kInsertArtifact =
    "INSERT INTO artifacts(sha256, size, name, user_name, created_ms) VALUES(?,?,?,?,?) "
    "ON CONFLICT(sha256) DO NOTHING";
inline const std::string kInsertArtifactOwner =
    "INSERT INTO artifact_owners(sha256, user_name, created_ms) VALUES(?,?,?) "
    "ON CONFLICT(sha256, user_name) DO NOTHING";
inline const std::string kUpsertBoard =
    "INSERT INTO boards(name, kind, agent, tags, emulated, serial, ram_bytes, state, health, "
    "current_job, updated_ms, holder, lease_until_ms, reservation_note, hold, "
    "health_failures, calibration, approved) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(name) DO UPDATE SET "
    "kind=excluded.kind, agent=excluded.agent, tags=excluded.tags, "
    "emulated=excluded.emulated, serial=excluded.serial, ram_bytes=excluded.ram_bytes, "
    "state=excluded.state, health=excluded.health, current_job=excluded.current_job, "
    "updated_ms=excluded.updated_ms, holder=excluded.holder, "
    "lease_until_ms=excluded.lease_until_ms, reservation_note=excluded.reservation_note, "
    "hold=excluded.hold, health_failures=excluded.health_failures, "
    "calibration=excluded.calibration, approved=excluded.approved";
inline const std::string kUpsertRun =
    "INSERT INTO runs(id, job_id, attempt, board, agent, state, created_ms, finished_ms, "
    "message, batches_expected, started, runner_version, port, cpu, clock_hz, emulated, "
    "timer_unit, counters, firmware_sha256, workload_sha256, toolchain, board_serial, note, "
    "seed, kernel_set) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(id) DO UPDATE SET "
    "state=excluded.state, finished_ms=excluded.finished_ms, message=excluded.message, "
    "batches_expected=excluded.batches_expected, started=excluded.started, "
    "runner_version=excluded.runner_version, port=excluded.port, cpu=excluded.cpu, "
    "clock_hz=excluded.clock_hz, emulated=excluded.emulated, "
    "timer_unit=excluded.timer_unit, counters=excluded.counters, "
    "firmware_sha256=excluded.firmware_sha256, workload_sha256=excluded.workload_sha256, "
    "toolchain=excluded.toolchain, board_serial=excluded.board_serial, note=excluded.note, "
    "seed=excluded.seed, kernel_set=excluded.kernel_set";
inline const std::string kUpdateJob =
    "UPDATE jobs SET state=?, attempts=?, started_ms=?, finished_ms=?, message=?, "
    "assigned_board=?, last_run_id=?, board=?, reruns_done=? WHERE id=?";
inline const std::string kInsertTransition =
    "INSERT INTO job_transitions(job_id, from_state, to_state, reason, actor, time_ms, time_us) "
    "VALUES(?,?,?,?,?,?,?)";
inline const std::string kInsertBoardTransition =
    "INSERT INTO board_transitions(board, field, from_value, to_value, reason, actor, "
    "time_ms) VALUES(?,?,?,?,?,?,?)";
inline const std::string kUpsertCaseResult =
    "INSERT INTO case_results(run_id, case_index, checksum, expected, ok, overhead) "
    "VALUES(?,?,?,?,?,?) ON CONFLICT(run_id, case_index) DO UPDATE SET "
    "checksum=excluded.checksum, expected=excluded.expected, ok=excluded.ok, "
    "overhead=excluded.overhead";
inline const std::string kUpsertCaseStats =
    "INSERT INTO case_stats(job_id, case_index, metric_index, run_id, metric, unit, n, min, "
    "median, mean, p90, p99, stddev, cv, max) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(job_id, case_index, metric_index) DO UPDATE SET run_id=excluded.run_id, "
    "metric=excluded.metric, unit=excluded.unit, n=excluded.n, min=excluded.min, "
    "median=excluded.median, mean=excluded.mean, p90=excluded.p90, p99=excluded.p99, "
    "stddev=excluded.stddev, cv=excluded.cv, max=excluded.max";
inline const std::string kInsertBatch =
    "INSERT INTO batches(run_id, sequence) VALUES(?,?) ON CONFLICT DO NOTHING";
inline const std::string kAddProgress =
    "UPDATE runs SET progress_done = progress_done + ? WHERE id = ? RETURNING progress_done";
inline const std::string kInsertJob =
    "INSERT INTO jobs(id, user_name, kind, board, op, label, state, iterations, warmup, "
    "num_cases, cases_artifact, timeout_s, attempts, created_ms, started_ms, finished_ms, "
    "message, assigned_board, last_run_id, priority, firmware_artifact, blob_artifact, "
    "tags, origin, kernels, model_name, model_sha256, model_summary, commit_sha, branch, "
    "code_url, reruns, max_cv_pct, reruns_done) "
    "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)";
inline const std::string kReserveIds =
    "INSERT INTO id_reservations(name, last) VALUES(?, ?) "
    "ON CONFLICT(name) DO UPDATE SET last = excluded.last "
    "WHERE id_reservations.last < excluded.last";
inline const std::string kInsertCase =
    "INSERT INTO job_cases(job_id, case_index, case_id, params) VALUES(?,?,?,?)";

// The counter and profile tables (migration 0005), after the rest of a write set.
template <typename C>
Status ApplyProfileWrites(C& w, const WriteSet& ws) {
  using Use = typename C::Use;
  for (const JobEvents& e : ws.job_events) {
    Use u(
        w.Statement("INSERT INTO job_events(job_id, events) VALUES(?,?) "
                    "ON CONFLICT(job_id) DO UPDATE SET events = excluded.events"));
    u.Bind(e.job_id).Bind(JoinStrings(e.events));
    if (Status st = u.Exec("storing a job's events"); !st.ok()) return st;
  }
  for (const BoardUnits& b : ws.board_units) {
    {
      Use u(w.Statement("DELETE FROM board_counter_units WHERE board = ?"));
      u.Bind(b.board);
      if (Status st = u.Exec("replacing a board's counter units"); !st.ok()) return st;
    }
    for (std::size_t i = 0; i < b.units.size(); ++i) {
      const server::CounterUnit& unit = b.units[i];
      Use u(w.Statement(
          "INSERT INTO board_counter_units(board, position, unit, max_simultaneous, events, "
          "emulated) VALUES(?,?,?,?,?,?)"));
      u.Bind(b.board).Bind(static_cast<std::uint64_t>(i)).Bind(unit.name);
      u.Bind(unit.max_simultaneous).Bind(JoinStrings(unit.events));
      u.Bind(i < b.emulated.size() && b.emulated[i]);
      if (Status st = u.Exec("storing a board's counter unit"); !st.ok()) return st;
    }
  }
  for (const RunPass& p : ws.run_passes) {
    Use u(
        w.Statement("INSERT INTO run_passes(run_id, pass, events) VALUES(?,?,?) "
                    "ON CONFLICT(run_id, pass) DO UPDATE SET events = excluded.events"));
    u.Bind(p.run_id).Bind(p.pass).Bind(JoinStrings(p.events));
    if (Status st = u.Exec("storing a run's pass"); !st.ok()) return st;
  }
  for (const OpProfileRow& o : ws.op_profiles) {
    Use u(w.Statement(
        "INSERT INTO op_profiles(run_id, pass, case_index, op_index, metric, op_type, op_name, "
        "count, sum, min, max, unclosed) VALUES(?,?,?,?,?,?,?,?,?,?,?,?) "
        "ON CONFLICT(run_id, pass, case_index, op_index, metric) DO UPDATE SET "
        "op_type = excluded.op_type, op_name = excluded.op_name, count = excluded.count, "
        "sum = excluded.sum, min = excluded.min, max = excluded.max, unclosed = "
        "excluded.unclosed"));
    u.Bind(o.run_id).Bind(o.pass).Bind(o.case_index).Bind(o.op_index).Bind(o.metric);
    u.Bind(o.type).Bind(o.name).Bind(o.count).Bind(o.sum).Bind(o.min).Bind(o.max);
    u.Bind(o.unclosed);
    if (Status st = u.Exec("storing an op profile"); !st.ok()) return st;
  }
  for (const MemoryFigure& m : ws.memory) {
    Use u(w.Statement(
        "INSERT INTO memory_reports(run_id, case_index, source, category, used, reserved) "
        "VALUES(?,?,?,?,?,?) ON CONFLICT(run_id, case_index, source, category) DO UPDATE SET "
        "used = excluded.used, reserved = excluded.reserved"));
    u.Bind(m.run_id).Bind(static_cast<std::int64_t>(m.case_index)).Bind(m.source);
    u.Bind(m.category).Bind(m.used).Bind(m.reserved);
    if (Status st = u.Exec("storing a memory figure"); !st.ok()) return st;
  }
  for (const std::string& sha : ws.deleted_artifacts) {
    Use u(w.Statement("DELETE FROM artifacts WHERE sha256 = ?"));
    u.Bind(sha);
    if (Status st = u.Exec("deleting an artifact"); !st.ok()) return st;
    Use o(w.Statement("DELETE FROM artifact_owners WHERE sha256 = ?"));
    o.Bind(sha);
    if (Status st = o.Exec("deleting an artifact's owners"); !st.ok()) return st;
  }
  return {};
}

// `ws`'s rows, in WriteSet's order of fields. `insert_samples(batch)` appends a new batch's
// samples (called once the batch row shows it is new). Fills outcome->duplicate_batch and
// outcome->run_progress, not its status.
template <typename C, typename InsertSamples>
Status ApplyWriteSetRows(C& w, const WriteSet& ws, WriteOutcome* outcome,
                         InsertSamples&& insert_samples) {
  using Use = typename C::Use;
  for (const NewJob& n : ws.new_jobs) {
    const Job& job = n.job;
    {
      Use u(w.Statement(kInsertJob));
      u.Bind(job.id).Bind(job.user).Bind(job.kind).Bind(job.board).Bind(job.op).Bind(job.label);
      u.Bind(server::JobStateName(job.state)).Bind(job.iterations).Bind(job.warmup);
      u.Bind(job.num_cases).Bind(job.cases_artifact).Bind(job.timeout_s).Bind(job.attempts);
      u.Bind(job.created_ms).Bind(job.started_ms).Bind(job.finished_ms).Bind(job.message);
      u.Bind(job.assigned_board).Bind(job.last_run_id).Bind(server::JobPriorityName(job.priority));
      u.Bind(job.firmware_artifact).Bind(job.blob_artifact).Bind(TagsToJson(job.tags));
      u.Bind(server::JobOriginName(job.origin));
      u.Bind(std::string(job.reference_kernels ? "reference" : "fast"));
      u.Bind(job.model_name).Bind(job.model_sha256).Bind(job.model_summary);
      u.Bind(job.commit).Bind(job.branch).Bind(job.url);
      u.Bind(job.reruns).Bind(job.max_cv_pct).Bind(job.reruns_done);
      if (Status s = u.Exec("storing job"); !s.ok()) return s;
    }
    for (std::size_t i = 0; i < n.cases.size(); ++i) {
      Use u(w.Statement(kInsertCase));
      u.Bind(job.id).Bind(static_cast<std::int64_t>(i)).Bind(n.cases[i].id);
      u.Bind(JoinInts(n.cases[i].params));
      if (Status s = u.Exec("storing job case"); !s.ok()) return s;
    }
  }
  if (ws.reserve_run_ids_to != 0) {
    Use u(w.Statement(kReserveIds));
    u.Bind(std::string("run")).Bind(ws.reserve_run_ids_to);
    if (Status s = u.Exec("reserving run ids"); !s.ok()) return s;
  }
  for (const Artifact& a : ws.artifacts) {
    Use u(w.Statement(kInsertArtifact));
    u.Bind(a.sha256).Bind(a.size).Bind(a.name).Bind(a.user).Bind(a.created_ms);
    if (Status s = u.Exec("storing artifact"); !s.ok()) return s;
    Use o(w.Statement(kInsertArtifactOwner));
    o.Bind(a.sha256).Bind(a.user).Bind(a.created_ms);
    if (Status s = o.Exec("storing an artifact's owner"); !s.ok()) return s;
  }
  for (const ArtifactSharing& a : ws.artifact_sharing) {
    Use u(w.Statement("UPDATE artifacts SET shared = ? WHERE sha256 = ?"));
    u.Bind(a.shared).Bind(a.sha256);
    if (Status s = u.Exec("sharing an artifact"); !s.ok()) return s;
  }
  for (const Board& b : ws.boards) {
    Use u(w.Statement(kUpsertBoard));
    u.Bind(b.name).Bind(b.kind).Bind(b.agent).Bind(TagsToJson(b.tags)).Bind(b.emulated);
    u.Bind(b.serial).Bind(b.ram_bytes).Bind(server::BoardStateName(b.state));
    u.Bind(server::BoardHealthName(b.health)).Bind(b.current_job).Bind(b.updated_ms);
    u.Bind(b.holder).Bind(b.lease_until_ms).Bind(b.reservation_note).Bind(b.hold);
    u.Bind(b.health_failures).Bind(b.calibration).Bind(b.approved);
    if (Status s = u.Exec("storing board"); !s.ok()) return s;
  }
  for (const Run& r : ws.runs) {
    const auto& p = r.provenance;
    Use u(w.Statement(kUpsertRun));
    u.Bind(r.id).Bind(r.job_id).Bind(r.attempt).Bind(r.board).Bind(r.agent);
    u.Bind(server::RunStateName(r.state)).Bind(r.created_ms).Bind(r.finished_ms).Bind(r.message);
    u.Bind(r.batches_expected).Bind(r.started).Bind(p.runner_version).Bind(p.port).Bind(p.cpu);
    u.Bind(p.clock_hz).Bind(p.emulated).Bind(p.timer_unit).Bind(JoinStrings(p.counters));
    u.Bind(p.firmware_sha256).Bind(p.workload_sha256).Bind(p.toolchain).Bind(p.board_serial);
    u.Bind(p.note).Bind(p.seed).Bind(p.kernel_set);
    if (Status s = u.Exec("storing run"); !s.ok()) return s;
  }
  for (const Job& j : ws.jobs) {
    Use u(w.Statement(kUpdateJob));
    u.Bind(server::JobStateName(j.state)).Bind(j.attempts).Bind(j.started_ms);
    u.Bind(j.finished_ms).Bind(j.message).Bind(j.assigned_board).Bind(j.last_run_id);
    u.Bind(j.board).Bind(j.reruns_done).Bind(j.id);
    if (Status s = u.Exec("updating job"); !s.ok()) return s;
  }
  for (const JobTransition& t : ws.transitions) {
    Use u(w.Statement(kInsertTransition));
    u.Bind(t.job_id).Bind(t.from).Bind(t.to).Bind(t.reason).Bind(t.actor).Bind(t.time_ms);
    u.Bind(t.time_us);
    if (Status s = u.Exec("storing job transition"); !s.ok()) return s;
  }
  for (const BoardTransition& t : ws.board_transitions) {
    Use u(w.Statement(kInsertBoardTransition));
    u.Bind(t.board).Bind(t.field).Bind(t.from).Bind(t.to).Bind(t.reason).Bind(t.actor);
    u.Bind(t.time_ms);
    if (Status s = u.Exec("storing board transition"); !s.ok()) return s;
  }
  for (const CaseResult& c : ws.case_results) {
    Use u(w.Statement(kUpsertCaseResult));
    u.Bind(c.run_id).Bind(c.case_index).Bind(c.checksum).Bind(c.expected).Bind(c.ok);
    u.Bind(c.overhead);
    if (Status s = u.Exec("storing case result"); !s.ok()) return s;
  }
  for (const CaseStats& c : ws.case_stats) {
    Use u(w.Statement(kUpsertCaseStats));
    u.Bind(c.job_id).Bind(c.case_index).Bind(c.metric_index).Bind(c.run_id).Bind(c.metric);
    u.Bind(c.unit).Bind(c.n).Bind(c.min).Bind(c.median).Bind(c.mean).Bind(c.p90).Bind(c.p99);
    u.Bind(c.stddev).Bind(c.cv).Bind(c.max);
    if (Status s = u.Exec("storing case statistics"); !s.ok()) return s;
  }
  if (Status s = ApplyProfileWrites(w, ws); !s.ok()) return s;
  if (ws.batch) {
    const SampleBatch& b = *ws.batch;
    {
      Use u(w.Statement(kInsertBatch));
      u.Bind(b.run_id).Bind(b.sequence);
      if (Status s = u.Exec("storing batch"); !s.ok()) return s;
    }
    if (w.Changes() == 0) {
      outcome->duplicate_batch = true;
      return {};
    }
    if (Status s = insert_samples(b); !s.ok()) return s;
    if (b.iterations > 0) {
      Use u(w.Statement(kAddProgress));
      u.Bind(b.iterations).Bind(b.run_id);
      if (u.Next()) outcome->run_progress = u.UInt(0);
      if (Status s = u.status(); !s.ok()) return s;
    }
  }
  return {};
}

}  // namespace mculab::db
