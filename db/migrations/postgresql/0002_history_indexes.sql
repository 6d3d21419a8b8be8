-- 0002: indexes for the job history (GET /api/v1/jobs), so a page of a filtered, sorted
-- list stays fast at 100,000 jobs (bench/history_api_bench.cc, bench/results/history_api.md).
--
-- One covering index per sort key of the history, ordered by (key, id) like the page, holding
-- every column a filter reads: a page is read in order from its index, filters are checked on the
-- index entries, OFFSET skips entries, and no table row is touched until the page's 50 ids are
-- known (SQLite is told the index with INDEXED BY; PostgreSQL's planner picks it from its
-- statistics). Counting a filter's matches scans whichever of them leads with a filtered column
-- (or jobs_state, from 0001, when nothing is filtered).
CREATE INDEX jobs_history_id ON jobs(id, state, op, kind, user_name, assigned_board, board,
                                     created_ms, label);
CREATE INDEX jobs_history_created ON jobs(created_ms, id, state, op, kind, user_name,
                                          assigned_board, board, label);
CREATE INDEX jobs_history_state ON jobs(state, id, op, kind, user_name, assigned_board, board,
                                        created_ms, label);
CREATE INDEX jobs_history_op ON jobs(op, id, state, kind, user_name, assigned_board, board,
                                     created_ms, label);
CREATE INDEX jobs_history_user ON jobs(user_name, id, state, op, kind, assigned_board, board,
                                       created_ms, label);
-- The board the history shows and sorts by: the assigned one, else the requested one. Written
-- exactly as the query writes it (db/history_sql.cc SortOf) so the planner matches it.
CREATE INDEX jobs_history_board ON jobs((CASE WHEN assigned_board <> '' THEN assigned_board
                                         ELSE board END), id, state, op, kind, user_name,
                                        assigned_board, board, created_ms, label);
-- The board filter matches either column: two narrow indexes let it count by a multi-index OR.
CREATE INDEX jobs_board ON jobs(board);
CREATE INDEX jobs_assigned_board ON jobs(assigned_board);
-- A label substring can only be found by reading every label: the narrowest index to read. A page
-- of few matches (rare labels) is found here and sorted, rather than by reading a wide index.
CREATE INDEX jobs_label ON jobs(label);
