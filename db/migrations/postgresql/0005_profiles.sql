-- 0005: counters, passes, per-op profiles and memory reports.
-- Kept in tables of their own so the jobs/runs/boards rows of earlier migrations stay as they are.

-- The events a job asked for at submit ("cycles" is implied), comma separated, catalogue order
-- as the user gave them. A job without a row asked for none.
CREATE TABLE job_events (
  job_id BIGINT PRIMARY KEY,             -- jobs.id
  events TEXT COLLATE "C" NOT NULL
);

-- The counter units a board's agent registered (agent.proto CounterUnit), in board order: the
-- pass planner's input, kept so that submit can validate events while an agent is reconnecting.
CREATE TABLE board_counter_units (
  board            TEXT COLLATE "C" NOT NULL,         -- boards.name
  position         BIGINT NOT NULL,      -- the unit's place in the board's order
  unit             TEXT COLLATE "C" NOT NULL,
  max_simultaneous BIGINT NOT NULL,
  events           TEXT COLLATE "C" NOT NULL,         -- comma separated, catalogue order
  emulated         BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (board, position)
);

-- What each pass of a run counts: "cycles" then the pass's events, comma separated. samples.pass
-- indexes it; samples.metric indexes runs.counters (the union over the passes).
CREATE TABLE run_passes (
  run_id BIGINT NOT NULL,                -- runs.id
  pass   BIGINT NOT NULL,
  events TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (run_id, pass)
);

-- Per-operator profiles, aggregated on the device (OP_SAMPLE) or by the agent (QEMU plugin op
-- regions): one row per (run, pass, case, op, metric). Runtime-neutral: TFLite Micro and
-- ExecuTorch runners report the same shape.
CREATE TABLE op_profiles (
  run_id     BIGINT NOT NULL,
  pass       BIGINT NOT NULL,
  case_index BIGINT NOT NULL,
  op_index   BIGINT NOT NULL,
  metric     BIGINT NOT NULL,            -- 0 = the timer, then runs.counters in order
  op_type    TEXT COLLATE "C" NOT NULL,
  op_name    TEXT COLLATE "C" NOT NULL,
  count      BIGINT NOT NULL,
  sum        BIGINT NOT NULL,
  min        BIGINT NOT NULL,
  max        BIGINT NOT NULL,
  unclosed   BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, pass, case_index, op_index, metric)
);

-- Memory: the runner ELF's sections (source 'elf', case_index -1: flash.text, flash.rodata,
-- flash.data, ram.data, ram.bss, ram.heap, ram.stack, and flash/ram totals) and the runner's MEMORY
-- reports (source 'runner', per case: arena, stack, or a runtime's own categories). Bytes.
CREATE TABLE memory_reports (
  run_id     BIGINT NOT NULL,
  case_index BIGINT NOT NULL,
  source     TEXT COLLATE "C" NOT NULL,
  category   TEXT COLLATE "C" NOT NULL,
  used       BIGINT NOT NULL,
  reserved   BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, case_index, source, category)
);
