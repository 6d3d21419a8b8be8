// SqliteStore reads of jobs, runs, boards and artifacts.
#include "db/sql_statement.h"
#include "db/sql_util.h"
#include "db/sqlite_store.h"
#include "db/store_rows.h"

namespace mculab::db {
Result<Job> SqliteStore::GetJob(JobId id) {
  static const std::string kSql = std::string("SELECT ") + kJobCols + "WHERE j.id = ?";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  u.Bind(id);
  return FirstRow<Job>(u, ReadJob<Use>,
                       MakeError(ErrorCode::kNotFound, "no job " + std::to_string(id)));
}

Result<std::vector<Job>> SqliteStore::ListActiveJobs() {
  static const std::string kSql =
      std::string("SELECT ") + kJobCols +
      "WHERE j.state IN ('queued', 'assigned', 'preparing', 'running') ORDER BY j.id";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  return AllRows(u, ReadJob<Use>);
}

Result<std::vector<CaseSpec>> SqliteStore::GetJobCases(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT case_index, case_id, params FROM job_cases WHERE job_id = ? ORDER BY case_index"));
  u.Bind(id);
  return AllRows(u, [](Use& row) { return CaseSpec{row.Int(1), SplitInts(row.Text(2))}; });
}

Result<std::vector<JobTransition>> SqliteStore::GetTransitions(JobId id) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT job_id, from_state, to_state, reason, actor, time_ms FROM job_transitions "
      "WHERE job_id = ? ORDER BY id"));
  u.Bind(id);
  return AllRows(u, [](Use& row) {
    return JobTransition{row.Int(0),  row.Text(1), row.Text(2),
                         row.Text(3), row.Text(4), row.Int(5)};
  });
}

Result<std::vector<Board>> SqliteStore::ListBoards() {
  static const std::string kSql = std::string("SELECT ") + kBoardCols + "ORDER BY name";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  return AllRows(u, ReadBoard<Use>);
}

Result<std::vector<BoardTransition>> SqliteStore::GetBoardTransitions(const std::string& board) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT board, field, from_value, to_value, reason, actor, time_ms FROM "
      "board_transitions WHERE board = ? ORDER BY id"));
  u.Bind(board);
  return AllRows(u, [](Use& row) {
    return BoardTransition{row.Text(0), row.Text(1), row.Text(2), row.Text(3),
                           row.Text(4), row.Text(5), row.Int(6)};
  });
}

Result<Run> SqliteStore::GetRun(RunId id) {
  static const std::string kSql = std::string("SELECT ") + kRunCols + "WHERE id = ?";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  u.Bind(id);
  return FirstRow<Run>(u, ReadRun<Use>,
                       MakeError(ErrorCode::kNotFound, "no run " + std::to_string(id)));
}

Result<std::vector<Run>> SqliteStore::ListRuns(JobId job) {
  static const std::string kSql =
      std::string("SELECT ") + kRunCols + "WHERE job_id = ? ORDER BY id";
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(kSql));
  u.Bind(job);
  return AllRows(u, ReadRun<Use>);
}

Result<JobId> SqliteStore::MaxJobId() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement("SELECT COALESCE(MAX(id), 0) FROM jobs"));
  return FirstRow<JobId>(
      u, [](Use& row) { return row.Int(0); }, JobId{0});
}

Result<RunId> SqliteStore::MaxRunId() {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT MAX(COALESCE((SELECT MAX(id) FROM runs), 0), "
      "COALESCE((SELECT last FROM id_reservations WHERE name = 'run'), 0))"));
  return FirstRow<RunId>(
      u, [](Use& row) { return row.Int(0); }, RunId{0});
}

Result<std::vector<Artifact>> SqliteStore::ListArtifactsBefore(std::int64_t ms) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT sha256, size, name, user_name, created_ms, shared FROM artifacts a "
      "WHERE created_ms < ? AND NOT EXISTS (SELECT 1 FROM artifact_owners o "
      "WHERE o.sha256 = a.sha256 AND o.created_ms >= ?) ORDER BY created_ms"));
  u.Bind(ms).Bind(ms);
  return AllRows(u, ReadArtifact<Use>);
}

Result<Store::ArtifactUsage> SqliteStore::GetArtifactUsage(const std::string& user) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM artifacts WHERE user_name = ?"));
  u.Bind(user);
  return FirstRow<ArtifactUsage>(
      u,
      [](Use& row) {
        return ArtifactUsage{row.UInt(0), row.UInt(1)};
      },
      ArtifactUsage{});
}

Result<bool> SqliteStore::IsArtifactOwner(const std::string& sha256, const std::string& user) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT COUNT(*) FROM artifact_owners WHERE sha256 = ? AND user_name = ?"));
  u.Bind(sha256).Bind(user);
  return FirstRow<bool>(
      u, [](Use& row) { return row.Int(0) > 0; }, false);
}

Result<std::optional<Artifact>> SqliteStore::GetArtifact(const std::string& sha256) {
  auto read = StartRead();
  if (!read.ok()) return read.error();
  Use u(read->connection().Statement(
      "SELECT sha256, size, name, user_name, created_ms, shared FROM artifacts WHERE sha256 = ?"));
  u.Bind(sha256);
  return FirstRow<std::optional<Artifact>>(
      u, [](Use& row) { return std::optional<Artifact>(ReadArtifact(row)); },
      std::optional<Artifact>());
}

}  // namespace mculab::db
