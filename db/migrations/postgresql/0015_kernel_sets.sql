-- The int8 kernel set: what a job asked for at submit (`--kernels`: 'fast', the runner's fastest
-- bit-exact set, or 'reference') and what each run's runner reported it ran in HELLO ('helium',
-- 'dsp', 'reference'; '' for a custom runtime, and for runs stored before this migration).
ALTER TABLE jobs ADD COLUMN kernels TEXT COLLATE "C" NOT NULL DEFAULT 'fast';
ALTER TABLE runs ADD COLUMN kernel_set TEXT COLLATE "C" NOT NULL DEFAULT '';
