-- Job transitions in microseconds (issue 29): submit -> running on an idle board takes about a
-- millisecond, which whole milliseconds cannot show. time_ms stays (every reader of whole
-- milliseconds keeps working); rows written before this migration have time_us NULL and are read
-- as time_ms * 1000.
ALTER TABLE job_transitions ADD COLUMN time_us BIGINT;
