-- The history's totals for a board filter without counting every job on the board, and a page of
-- one op, user or state in id or creation order without reading other jobs' index entries.
--
-- job_counts (migration 0011) gains the two board columns the board filter reads (the assigned and
-- the requested board), so a total for any mix of state, op, kind, user and board filters is a
-- sum over the few rows that match (a board of a million-job history has a third of the jobs;
-- counting them through two indexes took 30 ms of CPU).
DROP TRIGGER job_counts_insert;
DROP TRIGGER job_counts_delete;
DROP TRIGGER job_counts_update;
DROP TABLE job_counts;
CREATE TABLE job_counts (
  state          TEXT NOT NULL,
  op             TEXT NOT NULL,
  kind           TEXT NOT NULL,
  user_name      TEXT NOT NULL,
  assigned_board TEXT NOT NULL,
  board          TEXT NOT NULL,
  n              INTEGER NOT NULL,
  PRIMARY KEY (state, op, kind, user_name, assigned_board, board)
) WITHOUT ROWID;
INSERT INTO job_counts(state, op, kind, user_name, assigned_board, board, n)
  SELECT state, op, kind, user_name, assigned_board, board, COUNT(*) FROM jobs
  GROUP BY state, op, kind, user_name, assigned_board, board;

CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO job_counts(state, op, kind, user_name, assigned_board, board, n)
    VALUES (new.state, new.op, new.kind, new.user_name, new.assigned_board, new.board, 1)
    ON CONFLICT(state, op, kind, user_name, assigned_board, board) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER job_counts_delete AFTER DELETE ON jobs BEGIN
  UPDATE job_counts SET n = n - 1
    WHERE state = old.state AND op = old.op AND kind = old.kind AND user_name = old.user_name
      AND assigned_board = old.assigned_board AND board = old.board;
END;
CREATE TRIGGER job_counts_update AFTER UPDATE OF state, op, kind, user_name, assigned_board, board
  ON jobs
  WHEN old.state IS NOT new.state OR old.op IS NOT new.op OR old.kind IS NOT new.kind
       OR old.user_name IS NOT new.user_name OR old.assigned_board IS NOT new.assigned_board
       OR old.board IS NOT new.board
BEGIN
  UPDATE job_counts SET n = n - 1
    WHERE state = old.state AND op = old.op AND kind = old.kind AND user_name = old.user_name
      AND assigned_board = old.assigned_board AND board = old.board;
  INSERT INTO job_counts(state, op, kind, user_name, assigned_board, board, n)
    VALUES (new.state, new.op, new.kind, new.user_name, new.assigned_board, new.board, 1)
    ON CONFLICT(state, op, kind, user_name, assigned_board, board) DO UPDATE SET n = n + 1;
END;

-- A page of one op, user or state sorted by creation: read from (column, created_ms, id), covering
-- like the indexes of migration 0002, so a deep page steps over that column's entries only. (Sorted
-- by id, the same filters read jobs_history_op, _user and _state of migration 0002.)
CREATE INDEX jobs_history_op_created ON jobs(op, created_ms, id, state, kind, user_name,
                                             assigned_board, board, label);
CREATE INDEX jobs_history_user_created ON jobs(user_name, created_ms, id, state, op, kind,
                                               assigned_board, board, label);
CREATE INDEX jobs_history_state_created ON jobs(state, created_ms, id, op, kind, user_name,
                                                assigned_board, board, label);
