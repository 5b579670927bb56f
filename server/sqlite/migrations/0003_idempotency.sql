-- Idempotency keys: one row per (scope, key). A row is in flight while its
-- request runs (lock_id names that reservation) and completed once the
-- answer is stored in status, header (JSON object) and body. Times are Unix
-- microseconds; rows are swept once expires_on has passed.
CREATE TABLE idempotency_keys (
	scope       TEXT NOT NULL,
	idem_key    TEXT NOT NULL,
	fingerprint BLOB NOT NULL,
	lock_id     TEXT NOT NULL,
	state       TEXT NOT NULL,
	created_on  INTEGER NOT NULL,
	locked_on   INTEGER NOT NULL,
	expires_on  INTEGER NOT NULL,
	status      INTEGER,
	header      TEXT,
	body        BLOB,
	PRIMARY KEY (scope, idem_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_on);
