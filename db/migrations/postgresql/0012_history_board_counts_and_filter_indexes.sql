-- A page of one op, user or state sorted by creation: read from (column, created_ms, id), covering
-- like the indexes of migration 0002. (SQLite's migration of this number also widens its job
-- counts table, which PostgreSQL does without: migration 0011.)
CREATE INDEX jobs_history_op_created ON jobs(op, created_ms, id, state, kind, user_name,
                                             assigned_board, board, label);
CREATE INDEX jobs_history_user_created ON jobs(user_name, created_ms, id, state, op, kind,
                                               assigned_board, board, label);
CREATE INDEX jobs_history_state_created ON jobs(state, created_ms, id, op, kind, user_name,
                                                assigned_board, board, label);
