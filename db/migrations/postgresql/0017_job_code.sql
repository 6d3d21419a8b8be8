-- The code a job measures (issue 26): the commit, branch and a link (a merge request, a CI job)
-- given at submit or taken from the CI's variables. The history filters on the branch, and a
-- gate's `--baseline branch:NAME` is that branch's newest succeeded job of the same cases.
ALTER TABLE jobs ADD COLUMN commit_sha TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN branch TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN code_url TEXT COLLATE "C" NOT NULL DEFAULT '';
CREATE INDEX jobs_branch ON jobs(kind, branch, id) WHERE branch <> '';
