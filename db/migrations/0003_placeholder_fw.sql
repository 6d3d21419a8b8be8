-- Placeholder so that branch fw builds on its own (migrations are numbered without gaps);
-- the real 0003 migration of another branch replaces it at merge.
SELECT 1;
