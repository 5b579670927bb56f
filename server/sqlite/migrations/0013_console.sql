-- The merchant console's sign-ins and password reset links. Each is found
-- by a keyed hash of its token (the token itself lives only in a cookie or
-- a mail), so a copy of these tables signs nobody in. A reset's used_on is
-- NULL until the link, or a password change, uses it up.
CREATE TABLE console_sessions (
	token_hash   BLOB PRIMARY KEY,
	user_id      TEXT NOT NULL REFERENCES users (id),
	merchant_id  TEXT NOT NULL REFERENCES merchants (id),
	mode         TEXT NOT NULL,
	created_on   INTEGER NOT NULL,
	last_seen_on INTEGER NOT NULL
);
-- A sign-in sweeps its user's timed-out sessions; a password change ends
-- them all.
CREATE INDEX console_sessions_by_user ON console_sessions (user_id);

CREATE TABLE password_resets (
	token_hash BLOB PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users (id),
	created_on INTEGER NOT NULL,
	expires_on INTEGER NOT NULL,
	used_on    INTEGER
);
CREATE INDEX password_resets_by_user ON password_resets (user_id);

-- The dashboard counts a merchant's charges of one mode and day: without
-- this, every charge the merchant ever took would be read.
CREATE INDEX charges_by_merchant_day ON charges (merchant_id, mode, created_on);
