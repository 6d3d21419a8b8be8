-- Whether a board may take users' jobs yet: 0 while a board new to the lab waits for an admin's
-- approval (server config approve_new_boards); boards registered before this migration were
-- trusted already.
ALTER TABLE boards ADD COLUMN approved BIGINT NOT NULL DEFAULT 1;
