-- One work queue. Until now the worker's work was whatever object stood in
-- a waiting state (a pending charge, a requested capture, a pending refund
-- or cancel), with retry columns on each table. Now every item of work is a
-- row of its own, written in the transaction of the state change that
-- needs it, with its own attempts, next attempt time and last error, and a
-- lease (claimed_by, lease_until) so that two workers never run one item at
-- once. Further kinds (webhook deliveries, scheduled charges) are more rows.
--
-- Times are Unix microseconds. An item is claimable when due_at and
-- lease_until are both at or before now; lease_until is 0 when unclaimed.
-- seq orders items queued at the same due time in the order they came.
CREATE TABLE work (
	seq         INTEGER PRIMARY KEY,
	kind        TEXT NOT NULL,
	object_id   TEXT NOT NULL,
	attempts    INTEGER NOT NULL DEFAULT 0,
	due_at      INTEGER NOT NULL,
	claimed_by  TEXT NOT NULL DEFAULT '',
	lease_until INTEGER NOT NULL DEFAULT 0,
	last_error  TEXT NOT NULL DEFAULT '',
	UNIQUE (kind, object_id)
);
CREATE INDEX work_by_due ON work (due_at, seq);

-- What was waiting becomes queued work, once, with the attempts and the
-- retry time it had reached, oldest first as the worker used to take it.
INSERT INTO work (kind, object_id, attempts, due_at)
SELECT kind, id, attempts, retry_at FROM (
	SELECT 'authorize' AS kind, id, work_attempts AS attempts, retry_at FROM charges WHERE status = 'pending'
	UNION ALL SELECT 'capture', id, capture_attempts, capture_retry_at FROM charges
		WHERE capture_state = 'requested' AND status = 'authorized'
	UNION ALL SELECT 'refund', id, work_attempts, retry_at FROM refunds WHERE status = 'pending'
	UNION ALL SELECT 'cancel', id, work_attempts, retry_at FROM cancels WHERE status = 'pending'
) ORDER BY id, kind;

-- The old queue's indexes and retry columns are no longer read.
DROP INDEX charges_unfinished;
DROP INDEX refunds_pending;
DROP INDEX cancels_pending;
ALTER TABLE charges DROP COLUMN work_attempts;
ALTER TABLE charges DROP COLUMN retry_at;
ALTER TABLE charges DROP COLUMN capture_attempts;
ALTER TABLE charges DROP COLUMN capture_retry_at;
ALTER TABLE refunds DROP COLUMN work_attempts;
ALTER TABLE refunds DROP COLUMN retry_at;
ALTER TABLE cancels DROP COLUMN work_attempts;
ALTER TABLE cancels DROP COLUMN retry_at;
