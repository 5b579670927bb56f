-- The worker's retry state: an operation whose attempt failed (the acquirer
-- unreachable, a card that cannot be opened) waits until retry_at (Unix
-- microseconds) before the next attempt, so it neither spins nor holds up
-- the operations behind it.
ALTER TABLE charges ADD COLUMN work_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN work_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE refunds ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cancels ADD COLUMN work_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cancels ADD COLUMN retry_at INTEGER NOT NULL DEFAULT 0;
