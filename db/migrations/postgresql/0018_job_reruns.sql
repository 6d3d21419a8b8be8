-- Reruns of unstable cases (issue 26): `mculab submit --reruns N --max-cv PCT` runs a job again
-- on the same board while a case's timer varies more than the limit (0: the default of its kind of
-- measurement), at most N times; reruns_done counts the runs so far. Every run's samples stay.
ALTER TABLE jobs ADD COLUMN reruns BIGINT NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN max_cv_pct DOUBLE PRECISION NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN reruns_done BIGINT NOT NULL DEFAULT 0;
