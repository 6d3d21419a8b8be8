-- Follows (issue 26, alerts): a user follows one series (`mculab trend ... --follow`) or every
-- series of a label or branch (`mculab follow`); a change point in one is posted to the server's
-- webhooks. `query` is the follow as JSON (server/service/alerts.cc); notified_to the newest job
-- whose change point was posted (or predates the follow), so a restart posts nothing twice.
CREATE TABLE follows (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  user_name   TEXT NOT NULL,
  query       TEXT NOT NULL,
  created_ms  INTEGER NOT NULL,
  notified_to INTEGER NOT NULL DEFAULT 0
);
