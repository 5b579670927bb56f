-- A charge's capture keeps its own retry state: the authorisation's failed
-- attempts (work_attempts, retry_at) say nothing about the acquirer's
-- capture path, so a capture starts with the shortest delay, not with the
-- back-off the authorisation had reached.
ALTER TABLE charges ADD COLUMN capture_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE charges ADD COLUMN capture_retry_at INTEGER NOT NULL DEFAULT 0;
