-- How many jobs there are per (state, op, kind, user): the history's total for a filter on those
-- columns alone is a sum over a few rows, not a count over every matching job (a million jobs'
-- index entries take tens of milliseconds to count). Triggers keep it in step with jobs, in the
-- transaction that changes a job; rows that reach zero stay (they add nothing to a sum).
CREATE TABLE job_counts (
  state     TEXT NOT NULL,
  op        TEXT NOT NULL,
  kind      TEXT NOT NULL,
  user_name TEXT NOT NULL,
  n         INTEGER NOT NULL,
  PRIMARY KEY (state, op, kind, user_name)
) WITHOUT ROWID;
INSERT INTO job_counts(state, op, kind, user_name, n)
  SELECT state, op, kind, user_name, COUNT(*) FROM jobs GROUP BY state, op, kind, user_name;

CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO job_counts(state, op, kind, user_name, n)
    VALUES (new.state, new.op, new.kind, new.user_name, 1)
    ON CONFLICT(state, op, kind, user_name) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER job_counts_delete AFTER DELETE ON jobs BEGIN
  UPDATE job_counts SET n = n - 1
    WHERE state = old.state AND op = old.op AND kind = old.kind AND user_name = old.user_name;
END;
CREATE TRIGGER job_counts_update AFTER UPDATE OF state, op, kind, user_name ON jobs
  WHEN old.state IS NOT new.state OR old.op IS NOT new.op OR old.kind IS NOT new.kind
       OR old.user_name IS NOT new.user_name
BEGIN
  UPDATE job_counts SET n = n - 1
    WHERE state = old.state AND op = old.op AND kind = old.kind AND user_name = old.user_name;
  INSERT INTO job_counts(state, op, kind, user_name, n)
    VALUES (new.state, new.op, new.kind, new.user_name, 1)
    ON CONFLICT(state, op, kind, user_name) DO UPDATE SET n = n + 1;
END;

-- The same per label: a label found in many jobs is counted over its distinct labels (what LIKE
-- matches among them), not over every job that carries it.
CREATE TABLE label_counts (
  label TEXT PRIMARY KEY,
  n     INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO label_counts(label, n) SELECT label, COUNT(*) FROM jobs GROUP BY label;

CREATE TRIGGER label_counts_insert AFTER INSERT ON jobs BEGIN
  INSERT INTO label_counts(label, n) VALUES (new.label, 1)
    ON CONFLICT(label) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER label_counts_delete AFTER DELETE ON jobs BEGIN
  UPDATE label_counts SET n = n - 1 WHERE label = old.label;
END;
CREATE TRIGGER label_counts_update AFTER UPDATE OF label ON jobs
  WHEN old.label IS NOT new.label
BEGIN
  UPDATE label_counts SET n = n - 1 WHERE label = old.label;
  INSERT INTO label_counts(label, n) VALUES (new.label, 1)
    ON CONFLICT(label) DO UPDATE SET n = n + 1;
END;
