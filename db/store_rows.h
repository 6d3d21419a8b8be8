// Row readers of both stores (SQLite and PostgreSQL): the columns a job, run or board is read from
// (each ends in its FROM clause; the same SQL on both), and the reader of each kind of row. `Row`
// is a statement's use (db/sql_statement.h's Use, db/pg_statement.h's PgUse): both read a column
// by number as Int, UInt, U32, Bool, Real or Text. db-internal.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "db/sql_util.h"
#include "server/service/store.h"

namespace mculab::db {

using server::Artifact;
using server::Board;
using server::CaseResult;
using server::CaseStats;
using server::Job;
using server::Run;
using server::Sample;
using server::TokenRecord;
using server::User;

extern const char* const kJobCols;
extern const char* const kRunCols;
extern const char* const kBoardCols;
extern const char* const kTokenCols;
extern const char* const kCaseStatsCols;  // of case_stats, no FROM

template <typename Row>
Result<Job> ReadJob(Row& u) {
  Job j;
  j.id = u.Int(0);
  j.user = u.Text(1);
  j.kind = u.Text(2);
  j.board = u.Text(3);
  j.op = u.Text(4);
  j.label = u.Text(5);
  std::string state = u.Text(6);
  auto parsed = server::ParseJobState(state);
  if (!parsed) {
    return MakeError(ErrorCode::kDataLoss,
                     "job " + std::to_string(j.id) + " has an unknown state '" + state + "'");
  }
  j.state = *parsed;
  j.iterations = u.U32(7);
  j.warmup = u.U32(8);
  j.num_cases = u.U32(9);
  j.cases_artifact = u.Text(10);
  j.timeout_s = u.U32(11);
  j.attempts = u.U32(12);
  j.created_ms = u.Int(13);
  j.started_ms = u.Int(14);
  j.finished_ms = u.Int(15);
  j.message = u.Text(16);
  j.assigned_board = u.Text(17);
  j.last_run_id = u.Int(18);
  j.progress_done = u.UInt(19);
  j.priority = server::ParseJobPriority(u.Text(20)).value_or(server::JobPriority::kNormal);
  j.firmware_artifact = u.Text(21);
  j.blob_artifact = u.Text(22);
  j.tags = TagsFromJson(u.Text(23));
  j.origin = server::ParseJobOrigin(u.Text(24)).value_or(server::JobOrigin::kUser);
  j.reference_kernels = u.Text(25) == "reference";
  j.kernel_set_ran = u.Text(26);
  j.model_name = u.Text(27);
  j.model_sha256 = u.Text(28);
  j.model_summary = u.Text(29);
  j.commit = u.Text(30);
  j.branch = u.Text(31);
  j.url = u.Text(32);
  j.reruns = u.U32(33);
  j.max_cv_pct = u.Real(34);
  j.reruns_done = u.U32(35);
  return j;
}

template <typename Row>
Result<Run> ReadRun(Row& u) {
  Run r;
  r.id = u.Int(0);
  r.job_id = u.Int(1);
  r.attempt = u.U32(2);
  r.board = u.Text(3);
  r.agent = u.Text(4);
  std::string state = u.Text(5);
  auto parsed = server::ParseRunState(state);
  if (!parsed) {
    return MakeError(ErrorCode::kDataLoss,
                     "run " + std::to_string(r.id) + " has an unknown state '" + state + "'");
  }
  r.state = *parsed;
  r.created_ms = u.Int(6);
  r.finished_ms = u.Int(7);
  r.message = u.Text(8);
  r.batches_expected = u.UInt(9);
  r.progress_done = u.UInt(10);
  r.started = u.Bool(11);
  auto& p = r.provenance;
  p.runner_version = u.Text(12);
  p.port = u.Text(13);
  p.cpu = u.Text(14);
  p.clock_hz = u.UInt(15);
  p.emulated = u.Bool(16);
  p.timer_unit = u.Text(17);
  p.counters = SplitStrings(u.Text(18));
  p.firmware_sha256 = u.Text(19);
  p.workload_sha256 = u.Text(20);
  p.toolchain = u.Text(21);
  p.board_serial = u.Text(22);
  p.note = u.Text(23);
  p.seed = u.U32(24);
  p.kernel_set = u.Text(25);
  return r;
}

template <typename Row>
Result<Board> ReadBoard(Row& u) {
  Board b;
  b.name = u.Text(0);
  b.kind = u.Text(1);
  b.agent = u.Text(2);
  b.tags = TagsFromJson(u.Text(3));
  b.emulated = u.Bool(4);
  b.serial = u.Text(5);
  b.ram_bytes = u.UInt(6);
  auto state = server::ParseBoardState(u.Text(7));
  auto health = server::ParseBoardHealth(u.Text(8));
  if (!state || !health) {
    return MakeError(ErrorCode::kDataLoss, "board " + b.name + " has an unknown state or health");
  }
  b.state = *state;
  b.health = *health;
  b.current_job = u.Int(9);
  b.updated_ms = u.Int(10);
  b.holder = u.Text(11);
  b.lease_until_ms = u.Int(12);
  b.reservation_note = u.Text(13);
  b.hold = u.Bool(14);
  b.health_failures = u.U32(15);
  b.calibration = u.Int(16);
  b.approved = u.Bool(17);
  return b;
}

template <typename Row>
std::uint64_t ReadCount(Row& u) {
  return u.UInt(0);
}

template <typename Row>
Artifact ReadArtifact(Row& u) {
  return Artifact{u.Text(0), u.UInt(1), u.Text(2), u.Text(3), u.Int(4), u.Bool(5)};
}

template <typename Row>
Sample ReadSample(Row& u) {
  return Sample{u.U32(0), u.U32(1), u.U32(2), u.U32(3), u.Int(4)};
}

template <typename Row>
TokenRecord ReadToken(Row& u) {
  return TokenRecord{u.Text(0), u.Text(1), u.Text(2), u.Text(3), u.Int(4), u.Int(5)};
}

template <typename Row>
User ReadUser(Row& u) {
  return User{u.Text(0), u.Text(1), u.Int(2)};
}

template <typename Row>
CaseResult ReadCaseResult(Row& u) {
  return CaseResult{u.Int(0), u.U32(1), u.U32(2), u.U32(3), u.Bool(4), u.Int(5)};
}

// kCaseStatsCols from column `first` on.
template <typename Row>
CaseStats ReadCaseStats(Row& u, int first = 0) {
  CaseStats c;
  c.job_id = u.Int(first);
  c.run_id = u.Int(first + 1);
  c.case_index = u.U32(first + 2);
  c.metric_index = u.U32(first + 3);
  c.metric = u.Text(first + 4);
  c.unit = u.Text(first + 5);
  c.n = u.UInt(first + 6);
  double* fields[] = {&c.min, &c.median, &c.mean, &c.p90, &c.p99, &c.stddev, &c.cv, &c.max};
  for (int i = 0; i < 8; ++i) *fields[i] = u.Real(first + 7 + i);
  return c;
}

// A run's samples (ReadSample's columns) in (case_index, metric, pass, iteration) order, sorted by
// the database.
inline constexpr const char* kSamplesInCaseOrderSql =
    "SELECT pass, case_index, iteration, metric, value FROM samples WHERE run_id = ? "
    "ORDER BY case_index, metric, pass, iteration";

// Every remaining row of `u` (ReadSample's columns), handed to `chunk` `n` at a time.
template <typename Row>
Status HandOnSamples(Row& u, const std::function<void(std::span<const Sample>)>& chunk,
                     std::size_t n = 4096) {
  std::vector<Sample> buf;
  buf.reserve(n);
  while (u.Next()) {
    buf.push_back(ReadSample(u));
    if (buf.size() == n) {
      chunk(buf);
      buf.clear();
    }
  }
  if (!u.status().ok()) return u.status();
  if (!buf.empty()) chunk(buf);
  return {};
}

}  // namespace mculab::db
