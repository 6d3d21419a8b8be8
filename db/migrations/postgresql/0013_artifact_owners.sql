-- Who may use an upload.
--
-- Artifacts are content-addressed, so the same bytes may be uploaded by several users; each
-- upload adds its uploader here. A job may reference an artifact only when its submitter is one
-- of its owners or an admin marked the artifact shared: a hash seen in the job list is not a
-- capability. Every artifact stored so far keeps its first uploader as its owner.
CREATE TABLE artifact_owners (
  sha256     TEXT COLLATE "C" NOT NULL,             -- artifacts.sha256
  user_name  TEXT COLLATE "C" NOT NULL,
  created_ms BIGINT NOT NULL,          -- this user's first upload of these bytes
  PRIMARY KEY (sha256, user_name)
);
INSERT INTO artifact_owners(sha256, user_name, created_ms)
  SELECT sha256, user_name, created_ms FROM artifacts;
ALTER TABLE artifacts ADD COLUMN shared BIGINT NOT NULL DEFAULT 0;  -- 1: every member may use it
