-- 0001: the lab's first schema. Applied once; PRAGMA user_version records it.
-- Times are milliseconds since the Unix epoch. States are the domain's names (server/domain).
-- Foreign keys are documented in comments but not enforced: samples are the hot path.

CREATE TABLE artifacts (
  sha256      TEXT PRIMARY KEY,          -- lowercase hex; the file is home/artifacts/<sha[0:2]>/<sha>
  size        INTEGER NOT NULL,
  name        TEXT NOT NULL,             -- the uploader's file name, for display
  user_name   TEXT NOT NULL,
  created_ms  INTEGER NOT NULL
);

CREATE TABLE boards (
  name        TEXT PRIMARY KEY,
  kind        TEXT NOT NULL,
  agent       TEXT NOT NULL,
  tags        TEXT NOT NULL DEFAULT '{}', -- JSON object of strings
  emulated    INTEGER NOT NULL DEFAULT 0,
  serial      TEXT NOT NULL DEFAULT '',
  ram_bytes   INTEGER NOT NULL DEFAULT 0,
  state       TEXT NOT NULL,             -- idle | reserved | busy | offline
  health      TEXT NOT NULL,             -- good | unknown | bad | maintenance
  current_job INTEGER NOT NULL DEFAULT 0,
  updated_ms  INTEGER NOT NULL
);

CREATE TABLE jobs (
  id             INTEGER PRIMARY KEY,
  user_name      TEXT NOT NULL,
  kind           TEXT NOT NULL,
  board          TEXT NOT NULL DEFAULT '', -- requested board; '' = any board of the kind
  op             TEXT NOT NULL,
  label          TEXT NOT NULL DEFAULT '',
  state          TEXT NOT NULL,
  iterations     INTEGER NOT NULL,
  warmup         INTEGER NOT NULL,
  num_cases      INTEGER NOT NULL,
  cases_artifact TEXT NOT NULL DEFAULT '', -- artifacts.sha256 of the CSV the cases came from
  timeout_s      INTEGER NOT NULL,
  attempts       INTEGER NOT NULL DEFAULT 0,
  created_ms     INTEGER NOT NULL,
  started_ms     INTEGER NOT NULL DEFAULT 0,
  finished_ms    INTEGER NOT NULL DEFAULT 0,
  message        TEXT NOT NULL DEFAULT '',
  assigned_board TEXT NOT NULL DEFAULT '',
  last_run_id    INTEGER NOT NULL DEFAULT 0  -- runs.id of the latest run
);
CREATE INDEX jobs_state ON jobs(state);

CREATE TABLE job_cases (
  job_id     INTEGER NOT NULL,             -- jobs.id
  case_index INTEGER NOT NULL,             -- position in the sweep
  case_id    INTEGER NOT NULL,             -- the CSV's id column
  params     TEXT NOT NULL,                -- the op's parameters in catalog order: "1,16,32,..."
  PRIMARY KEY (job_id, case_index)
) WITHOUT ROWID;

CREATE TABLE runs (
  id               INTEGER PRIMARY KEY,
  job_id           INTEGER NOT NULL,       -- jobs.id
  attempt          INTEGER NOT NULL,
  board            TEXT NOT NULL,
  agent            TEXT NOT NULL,
  state            TEXT NOT NULL,          -- assigned | preparing | running | succeeded |
                                           -- workload_failed | infra_failed | cancelled | timed_out
  created_ms       INTEGER NOT NULL,
  finished_ms      INTEGER NOT NULL DEFAULT 0,
  message          TEXT NOT NULL DEFAULT '',
  batches_expected INTEGER NOT NULL DEFAULT 0,
  progress_done    INTEGER NOT NULL DEFAULT 0, -- measured iterations stored, grown with each batch
  started          INTEGER NOT NULL DEFAULT 0, -- RunStarted received: the columns below are set
  runner_version   TEXT NOT NULL DEFAULT '',
  port             TEXT NOT NULL DEFAULT '',
  cpu              TEXT NOT NULL DEFAULT '',
  clock_hz         INTEGER NOT NULL DEFAULT 0,
  emulated         INTEGER NOT NULL DEFAULT 0,
  timer_unit       TEXT NOT NULL DEFAULT '',
  counters         TEXT NOT NULL DEFAULT '', -- comma separated; metric i + 1 is the i-th
  firmware_sha256  TEXT NOT NULL DEFAULT '',
  workload_sha256  TEXT NOT NULL DEFAULT '',
  toolchain        TEXT NOT NULL DEFAULT '',
  board_serial     TEXT NOT NULL DEFAULT '',
  note             TEXT NOT NULL DEFAULT '',
  seed             INTEGER NOT NULL DEFAULT 0   -- the workload's tensor-generator seed
);
CREATE INDEX runs_job ON runs(job_id);

-- A batch row is written in the same transaction as the batch's samples: a repeated (run,
-- sequence) is a no-op, without paying for a primary key on every sample (DESIGN.md §6).
CREATE TABLE batches (
  run_id   INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  PRIMARY KEY (run_id, sequence)
) WITHOUT ROWID;

-- Every raw sample. No composite primary key (see batches); the run index keeps reads of one run
-- cheap and is appended in order as runs progress.
CREATE TABLE samples (
  run_id     INTEGER NOT NULL,
  pass       INTEGER NOT NULL,
  case_index INTEGER NOT NULL,
  iteration  INTEGER NOT NULL,
  metric     INTEGER NOT NULL,             -- 0 = the timer, then the run's counters in order
  value      INTEGER NOT NULL
);
CREATE INDEX samples_run ON samples(run_id);

CREATE TABLE case_results (
  run_id     INTEGER NOT NULL,
  case_index INTEGER NOT NULL,
  checksum   INTEGER NOT NULL,             -- the runner's output checksum
  expected   INTEGER NOT NULL,             -- the agent's host reference
  ok         INTEGER NOT NULL,
  overhead   INTEGER NOT NULL,             -- empty-case measurement, in the timer's unit
  PRIMARY KEY (run_id, case_index)
) WITHOUT ROWID;

CREATE TABLE case_stats (
  job_id       INTEGER NOT NULL,
  case_index   INTEGER NOT NULL,
  metric_index INTEGER NOT NULL,
  run_id       INTEGER NOT NULL,
  metric       TEXT NOT NULL,
  unit         TEXT NOT NULL,
  n            INTEGER NOT NULL,
  min          REAL NOT NULL,
  median       REAL NOT NULL,
  mean         REAL NOT NULL,
  p90          REAL NOT NULL,
  p99          REAL NOT NULL,
  stddev       REAL NOT NULL,
  cv           REAL NOT NULL,
  max          REAL NOT NULL,
  PRIMARY KEY (job_id, case_index, metric_index)
) WITHOUT ROWID;

-- The audit trail: every job state transition, who caused it and why.
CREATE TABLE job_transitions (
  id         INTEGER PRIMARY KEY,
  job_id     INTEGER NOT NULL,
  from_state TEXT NOT NULL,                -- '' for creation
  to_state   TEXT NOT NULL,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  time_ms    INTEGER NOT NULL
);
CREATE INDEX job_transitions_job ON job_transitions(job_id);

-- The same for boards: scheduling state and health changes.
CREATE TABLE board_transitions (
  id         INTEGER PRIMARY KEY,
  board      TEXT NOT NULL,
  field      TEXT NOT NULL,                -- state | health
  from_value TEXT NOT NULL,
  to_value   TEXT NOT NULL,
  reason     TEXT NOT NULL,
  actor      TEXT NOT NULL,
  time_ms    INTEGER NOT NULL
);
CREATE INDEX board_transitions_board ON board_transitions(board);
