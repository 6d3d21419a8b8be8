-- 0005: counters, passes, per-op profiles and memory reports.
-- Kept in tables of their own so the jobs/runs/boards rows of earlier migrations stay as they are.

-- The events a job asked for at submit ("cycles" is implied), comma separated, catalogue order
-- as the user gave them. A job without a row asked for none.
CREATE TABLE job_events (
  job_id INTEGER PRIMARY KEY,             -- jobs.id
  events TEXT NOT NULL
);

-- The counter units a board's agent registered (agent.proto CounterUnit), in board order: the
-- pass planner's input, kept so that submit can validate events while an agent is reconnecting.
CREATE TABLE board_counter_units (
  board            TEXT NOT NULL,         -- boards.name
  position         INTEGER NOT NULL,      -- the unit's place in the board's order
  unit             TEXT NOT NULL,
  max_simultaneous INTEGER NOT NULL,
  events           TEXT NOT NULL,         -- comma separated, catalogue order
  emulated         INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (board, position)
) WITHOUT ROWID;

-- What each pass of a run counts: "cycles" then the pass's events, comma separated. samples.pass
-- indexes it; samples.metric indexes runs.counters (the union over the passes).
CREATE TABLE run_passes (
  run_id INTEGER NOT NULL,                -- runs.id
  pass   INTEGER NOT NULL,
  events TEXT NOT NULL,
  PRIMARY KEY (run_id, pass)
) WITHOUT ROWID;

-- Per-operator profiles, aggregated on the device (OP_SAMPLE) or by the agent (QEMU plugin op
-- regions): one row per (run, pass, case, op, metric). Runtime-neutral: TFLite Micro and
-- ExecuTorch runners report the same shape.
CREATE TABLE op_profiles (
  run_id     INTEGER NOT NULL,
  pass       INTEGER NOT NULL,
  case_index INTEGER NOT NULL,
  op_index   INTEGER NOT NULL,
  metric     INTEGER NOT NULL,            -- 0 = the timer, then runs.counters in order
  op_type    TEXT NOT NULL,
  op_name    TEXT NOT NULL,
  count      INTEGER NOT NULL,
  sum        INTEGER NOT NULL,
  min        INTEGER NOT NULL,
  max        INTEGER NOT NULL,
  unclosed   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, pass, case_index, op_index, metric)
) WITHOUT ROWID;

-- Memory: the runner ELF's sections (source 'elf', case_index -1: flash.text, flash.rodata,
-- flash.data, ram.data, ram.bss, ram.heap, ram.stack, and flash/ram totals) and the runner's MEMORY
-- reports (source 'runner', per case: arena, stack, or a runtime's own categories). Bytes.
CREATE TABLE memory_reports (
  run_id     INTEGER NOT NULL,
  case_index INTEGER NOT NULL,
  source     TEXT NOT NULL,
  category   TEXT NOT NULL,
  used       INTEGER NOT NULL,
  reserved   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, case_index, source, category)
) WITHOUT ROWID;
