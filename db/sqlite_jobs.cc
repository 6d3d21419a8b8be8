// SqliteStore reads of jobs, runs, boards and artifacts.
#include <sqlite3.h>

#include "db/sql_statement.h"
#include "db/sql_util.h"
#include "db/sqlite_rows.h"
#include "db/sqlite_statements.h"
#include "db/sqlite_store.h"

namespace mculab::db {

Result<Job> SqliteStore::GetJob(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_job);
  u.Bind(id);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return MakeError(ErrorCode::kNotFound, "no job " + std::to_string(id));
  }
  return ReadJob(u);
}

Result<std::vector<Job>> SqliteStore::ListJobs(const JobFilter& f) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_jobs);
  u.Bind(f.state).Bind(f.kind).Bind(f.board).Bind(f.op).Bind(f.user).Bind(f.before_id);
  u.Bind(f.limit);
  std::vector<Job> out;
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    out.push_back(std::move(*j));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<Job>> SqliteStore::ListActiveJobs() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_active_jobs);
  std::vector<Job> out;
  while (u.Next()) {
    auto j = ReadJob(u);
    if (!j.ok()) return j.error();
    out.push_back(std::move(*j));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<CaseSpec>> SqliteStore::GetJobCases(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_cases);
  u.Bind(id);
  std::vector<CaseSpec> out;
  while (u.Next()) out.push_back(CaseSpec{u.Int(1), SplitInts(u.Text(2))});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<JobTransition>> SqliteStore::GetTransitions(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_transitions);
  u.Bind(id);
  std::vector<JobTransition> out;
  while (u.Next()) {
    out.push_back(JobTransition{u.Int(0), u.Text(1), u.Text(2), u.Text(3), u.Text(4), u.Int(5)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<Board>> SqliteStore::ListBoards() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_boards);
  std::vector<Board> out;
  while (u.Next()) {
    auto b = ReadBoard(u);
    if (!b.ok()) return b.error();
    out.push_back(std::move(*b));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<std::vector<BoardTransition>> SqliteStore::GetBoardTransitions(const std::string& board) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_board_transitions);
  u.Bind(board);
  std::vector<BoardTransition> out;
  while (u.Next()) {
    out.push_back(BoardTransition{u.Text(0), u.Text(1), u.Text(2), u.Text(3), u.Text(4), u.Text(5),
                                  u.Int(6)});
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<Run> SqliteStore::GetRun(RunId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_run);
  u.Bind(id);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return MakeError(ErrorCode::kNotFound, "no run " + std::to_string(id));
  }
  return ReadRun(u);
}

Result<std::vector<Run>> SqliteStore::ListRuns(JobId job) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().list_runs);
  u.Bind(job);
  std::vector<Run> out;
  while (u.Next()) {
    auto r = ReadRun(u);
    if (!r.ok()) return r.error();
    out.push_back(std::move(*r));
  }
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<JobId> SqliteStore::MaxJobId() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().max_job);
  if (!u.Next()) return u.status().ok() ? JobId{0} : Result<JobId>(u.status().error());
  return u.Int(0);
}

Result<RunId> SqliteStore::MaxRunId() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().max_run);
  if (!u.Next()) return u.status().ok() ? RunId{0} : Result<RunId>(u.status().error());
  return u.Int(0);
}

Result<std::vector<Artifact>> SqliteStore::ListArtifactsBefore(std::int64_t ms) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().artifacts_before);
  u.Bind(ms);
  std::vector<Artifact> out;
  while (u.Next()) out.push_back(Artifact{u.Text(0), u.UInt(1), u.Text(2), u.Text(3), u.Int(4)});
  if (!u.status().ok()) return u.status().error();
  return out;
}

Result<Store::ArtifactUsage> SqliteStore::GetArtifactUsage(const std::string& user) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().artifact_usage);
  u.Bind(user);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return ArtifactUsage{};
  }
  return ArtifactUsage{u.UInt(0), u.UInt(1)};
}

Result<std::optional<Artifact>> SqliteStore::GetArtifact(const std::string& sha256) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->s().get_artifact);
  u.Bind(sha256);
  if (!u.Next()) {
    if (!u.status().ok()) return u.status().error();
    return std::optional<Artifact>();
  }
  return std::optional<Artifact>(Artifact{u.Text(0), u.UInt(1), u.Text(2), u.Text(3), u.Int(4)});
}

}  // namespace mculab::db
