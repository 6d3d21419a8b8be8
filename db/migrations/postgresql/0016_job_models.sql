-- What a model job measured (issue 25): the model's file name as submitted, the SHA-256 of the
-- .tflite itself (the blob may carry an input too) and its graph summary. A model series is one
-- model name; a changed file under that name is marked like a runner change. Jobs stored before
-- this migration have none of them and belong to no model series.
ALTER TABLE jobs ADD COLUMN model_name TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN model_sha256 TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN model_summary TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX jobs_model_name ON jobs(kind, model_name) WHERE model_name <> '';
-- Emulated boards now report their timer in executed instructions, not clock ticks (issue 25):
-- their health-check calibration, taken in ticks, is taken again at the next passing check.
UPDATE boards SET calibration = 0 WHERE emulated = 1;
