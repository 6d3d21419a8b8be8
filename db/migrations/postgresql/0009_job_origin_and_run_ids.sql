-- Who made a job: 'user' (a submit) or 'health_check' (the server's check of a board). Health
-- checks were known by their user name 'lab' before; existing ones are marked by what the server
-- always gave them: that user, a named board and the label "health check of <board>".
ALTER TABLE jobs ADD COLUMN origin TEXT COLLATE "C" NOT NULL DEFAULT 'user';
UPDATE jobs SET origin = 'health_check'
  WHERE user_name = 'lab' AND board <> '' AND label = 'health check of ' || board;

-- Run ids the server has reserved (name 'run': the highest reserved id). A server takes a block
-- at start and extends it ahead of use, each reservation committed before a run id in it can
-- reach an agent, so an id is never handed out twice, even after a crash that lost the run's row.
CREATE TABLE id_reservations (
  name TEXT COLLATE "C" PRIMARY KEY,
  last BIGINT NOT NULL
);
