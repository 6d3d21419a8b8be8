-- 0004: scheduling: job priority, board reservations with leases, health checks.
ALTER TABLE jobs ADD COLUMN priority TEXT COLLATE "C" NOT NULL DEFAULT 'normal';  -- high | normal | low
ALTER TABLE boards ADD COLUMN holder TEXT COLLATE "C" NOT NULL DEFAULT '';  -- '' = not reserved
ALTER TABLE boards ADD COLUMN lease_until_ms BIGINT NOT NULL DEFAULT 0;
ALTER TABLE boards ADD COLUMN reservation_note TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE boards ADD COLUMN hold BIGINT NOT NULL DEFAULT 0;         -- 1: a --hold lease
ALTER TABLE boards ADD COLUMN health_failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE boards ADD COLUMN calibration BIGINT NOT NULL DEFAULT 0;  -- health-check median
