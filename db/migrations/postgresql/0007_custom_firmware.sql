-- Bring your own runtime: a job may run an uploaded runner ELF (or host
-- executable) with an uploaded blob instead of the board's generic runner. Both are
-- artifacts.sha256 values; '' for operator benchmarks.
ALTER TABLE jobs ADD COLUMN firmware_artifact TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN blob_artifact TEXT COLLATE "C" NOT NULL DEFAULT '';
