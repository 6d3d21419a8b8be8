-- 0001: the lab's first schema, as db/migrations/0001_initial.sql for SQLite. Applied once; the
-- table mculab_schema records the last migration applied (db/pg_store.cc). Text compares and sorts
-- byte by byte (COLLATE "C", SQLite's BINARY) whatever the database's locale.
-- Times are milliseconds since the Unix epoch. States are the domain's names (server/domain).
-- Foreign keys are documented in comments but not enforced: samples are the hot path.

CREATE TABLE artifacts (
  sha256      TEXT COLLATE "C" PRIMARY KEY,  -- lowercase hex; the file is home/artifacts/<sha[0:2]>/<sha>
  size        BIGINT NOT NULL,
  name        TEXT COLLATE "C" NOT NULL,             -- the uploader's file name, for display
  user_name   TEXT COLLATE "C" NOT NULL,
  created_ms  BIGINT NOT NULL
);

CREATE TABLE boards (
  name        TEXT COLLATE "C" PRIMARY KEY,
  kind        TEXT COLLATE "C" NOT NULL,
  agent       TEXT COLLATE "C" NOT NULL,
  tags        TEXT COLLATE "C" NOT NULL DEFAULT '{}', -- JSON object of strings
  emulated    BIGINT NOT NULL DEFAULT 0,
  serial      TEXT COLLATE "C" NOT NULL DEFAULT '',
  ram_bytes   BIGINT NOT NULL DEFAULT 0,
  state       TEXT COLLATE "C" NOT NULL,             -- idle | reserved | busy | offline
  health      TEXT COLLATE "C" NOT NULL,             -- good | unknown | bad | maintenance
  current_job BIGINT NOT NULL DEFAULT 0,
  updated_ms  BIGINT NOT NULL
);

CREATE TABLE jobs (
  id             BIGINT PRIMARY KEY,
  user_name      TEXT COLLATE "C" NOT NULL,
  kind           TEXT COLLATE "C" NOT NULL,
  board          TEXT COLLATE "C" NOT NULL DEFAULT '', -- requested board; '' = any board of the kind
  op             TEXT COLLATE "C" NOT NULL,
  label          TEXT COLLATE "C" NOT NULL DEFAULT '',
  state          TEXT COLLATE "C" NOT NULL,
  iterations     BIGINT NOT NULL,
  warmup         BIGINT NOT NULL,
  num_cases      BIGINT NOT NULL,
  cases_artifact TEXT COLLATE "C" NOT NULL DEFAULT '', -- artifacts.sha256 of the CSV the cases came from
  timeout_s      BIGINT NOT NULL,
  attempts       BIGINT NOT NULL DEFAULT 0,
  created_ms     BIGINT NOT NULL,
  started_ms     BIGINT NOT NULL DEFAULT 0,
  finished_ms    BIGINT NOT NULL DEFAULT 0,
  message        TEXT COLLATE "C" NOT NULL DEFAULT '',
  assigned_board TEXT COLLATE "C" NOT NULL DEFAULT '',
  last_run_id    BIGINT NOT NULL DEFAULT 0  -- runs.id of the latest run
);
CREATE INDEX jobs_state ON jobs(state);

CREATE TABLE job_cases (
  job_id     BIGINT NOT NULL,             -- jobs.id
  case_index BIGINT NOT NULL,             -- position in the sweep
  case_id    BIGINT NOT NULL,             -- the CSV's id column
  params     TEXT COLLATE "C" NOT NULL,  -- the op's parameters in catalog order: "1,16,32,..."
  PRIMARY KEY (job_id, case_index)
);

CREATE TABLE runs (
  id               BIGINT PRIMARY KEY,
  job_id           BIGINT NOT NULL,       -- jobs.id
  attempt          BIGINT NOT NULL,
  board            TEXT COLLATE "C" NOT NULL,
  agent            TEXT COLLATE "C" NOT NULL,
  state            TEXT COLLATE "C" NOT NULL,  -- assigned | preparing | running | succeeded |
                                           -- workload_failed | infra_failed | cancelled | timed_out
  created_ms       BIGINT NOT NULL,
  finished_ms      BIGINT NOT NULL DEFAULT 0,
  message          TEXT COLLATE "C" NOT NULL DEFAULT '',
  batches_expected BIGINT NOT NULL DEFAULT 0,
  progress_done    BIGINT NOT NULL DEFAULT 0, -- measured iterations stored, grown with each batch
  started          BIGINT NOT NULL DEFAULT 0, -- RunStarted received: the columns below are set
  runner_version   TEXT COLLATE "C" NOT NULL DEFAULT '',
  port             TEXT COLLATE "C" NOT NULL DEFAULT '',
  cpu              TEXT COLLATE "C" NOT NULL DEFAULT '',
  clock_hz         BIGINT NOT NULL DEFAULT 0,
  emulated         BIGINT NOT NULL DEFAULT 0,
  timer_unit       TEXT COLLATE "C" NOT NULL DEFAULT '',
  counters         TEXT COLLATE "C" NOT NULL DEFAULT '', -- comma separated; metric i + 1 is the i-th
  firmware_sha256  TEXT COLLATE "C" NOT NULL DEFAULT '',
  workload_sha256  TEXT COLLATE "C" NOT NULL DEFAULT '',
  toolchain        TEXT COLLATE "C" NOT NULL DEFAULT '',
  board_serial     TEXT COLLATE "C" NOT NULL DEFAULT '',
  note             TEXT COLLATE "C" NOT NULL DEFAULT '',
  seed             BIGINT NOT NULL DEFAULT 0   -- the workload's tensor-generator seed
);
CREATE INDEX runs_job ON runs(job_id);

-- A batch row is written in the same transaction as the batch's samples: a repeated (run,
-- sequence) is a no-op, without paying for a primary key on every sample (DESIGN.md §6).
CREATE TABLE batches (
  run_id   BIGINT NOT NULL,
  sequence BIGINT NOT NULL,
  PRIMARY KEY (run_id, sequence)
);

-- Every raw sample. No composite primary key (see batches); the run index keeps reads of one run
-- cheap and is appended in order as runs progress.
CREATE TABLE samples (
  run_id     BIGINT NOT NULL,
  pass       BIGINT NOT NULL,
  case_index BIGINT NOT NULL,
  iteration  BIGINT NOT NULL,
  metric     BIGINT NOT NULL,             -- 0 = the timer, then the run's counters in order
  value      BIGINT NOT NULL
);
CREATE INDEX samples_run ON samples(run_id);
-- Samples ever stored (one row): grown with each batch in its transaction, so /metrics reads a
-- counter instead of counting the table (SQLite reads its largest rowid).
CREATE TABLE samples_stored (
  n BIGINT NOT NULL
);
INSERT INTO samples_stored(n) VALUES (0);

CREATE TABLE case_results (
  run_id     BIGINT NOT NULL,
  case_index BIGINT NOT NULL,
  checksum   BIGINT NOT NULL,             -- the runner's output checksum
  expected   BIGINT NOT NULL,             -- the agent's host reference
  ok         BIGINT NOT NULL,
  overhead   BIGINT NOT NULL,             -- empty-case measurement, in the timer's unit
  PRIMARY KEY (run_id, case_index)
);

CREATE TABLE case_stats (
  job_id       BIGINT NOT NULL,
  case_index   BIGINT NOT NULL,
  metric_index BIGINT NOT NULL,
  run_id       BIGINT NOT NULL,
  metric       TEXT COLLATE "C" NOT NULL,
  unit         TEXT COLLATE "C" NOT NULL,
  n            BIGINT NOT NULL,
  min          DOUBLE PRECISION NOT NULL,
  median       DOUBLE PRECISION NOT NULL,
  mean         DOUBLE PRECISION NOT NULL,
  p90          DOUBLE PRECISION NOT NULL,
  p99          DOUBLE PRECISION NOT NULL,
  stddev       DOUBLE PRECISION NOT NULL,
  cv           DOUBLE PRECISION NOT NULL,
  max          DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (job_id, case_index, metric_index)
);

-- The audit trail: every job state transition, who caused it and why.
CREATE TABLE job_transitions (
  id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  job_id     BIGINT NOT NULL,
  from_state TEXT COLLATE "C" NOT NULL,                -- '' for creation
  to_state   TEXT COLLATE "C" NOT NULL,
  reason     TEXT COLLATE "C" NOT NULL,
  actor      TEXT COLLATE "C" NOT NULL,
  time_ms    BIGINT NOT NULL
);
CREATE INDEX job_transitions_job ON job_transitions(job_id);

-- The same for boards: scheduling state and health changes.
CREATE TABLE board_transitions (
  id         BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  board      TEXT COLLATE "C" NOT NULL,
  field      TEXT COLLATE "C" NOT NULL,                -- state | health
  from_value TEXT COLLATE "C" NOT NULL,
  to_value   TEXT COLLATE "C" NOT NULL,
  reason     TEXT COLLATE "C" NOT NULL,
  actor      TEXT COLLATE "C" NOT NULL,
  time_ms    BIGINT NOT NULL
);
CREATE INDEX board_transitions_board ON board_transitions(board);
