-- 0003: a placeholder on the sched branch only, so that 0004 has no gap; the auth branch owns the
-- real 0003. Delete this file when merging a branch that brings 0003.
SELECT 1;
