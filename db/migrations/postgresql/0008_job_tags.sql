-- Tag matching (admission control, DESIGN.md section 3): the board tags a job asks for
-- (cpu=cortex-m55, ...), a JSON object of strings like boards.tags; '{}' for none. A job runs only
-- on a board with every one of them.
ALTER TABLE jobs ADD COLUMN tags TEXT COLLATE "C" NOT NULL DEFAULT '{}';
