-- Merchants, their console users, stores, app tokens and resource quotas.
-- Ids are time-ordered UUIDs as text, so ordering by id orders by creation;
-- times are Unix microseconds.
CREATE TABLE merchants (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	email      TEXT NOT NULL,
	verified   INTEGER NOT NULL,
	created_on INTEGER NOT NULL
);

CREATE TABLE users (
	id            TEXT PRIMARY KEY,
	merchant_id   TEXT NOT NULL REFERENCES merchants (id),
	email         TEXT NOT NULL UNIQUE,
	password_hash BLOB NOT NULL,
	created_on    INTEGER NOT NULL
);

CREATE TABLE stores (
	id            TEXT PRIMARY KEY,
	merchant_id   TEXT NOT NULL REFERENCES merchants (id),
	name          TEXT NOT NULL,
	pci_compliant INTEGER NOT NULL,
	settings      TEXT NOT NULL,
	created_on    INTEGER NOT NULL
);
CREATE INDEX stores_by_merchant ON stores (merchant_id, id);

-- store_id is '' for a merchant token.
CREATE TABLE app_tokens (
	id          TEXT PRIMARY KEY,
	merchant_id TEXT NOT NULL REFERENCES merchants (id),
	store_id    TEXT NOT NULL,
	creator_id  TEXT NOT NULL,
	mode        TEXT NOT NULL,
	domains     TEXT NOT NULL,
	secret_hash BLOB NOT NULL,
	jwt         TEXT NOT NULL,
	created_on  INTEGER NOT NULL,
	revoked_on  INTEGER
);
CREATE INDEX app_tokens_by_owner ON app_tokens (merchant_id, store_id, id);

-- One counter per limited resource, scope and period ('' when the resource
-- is counted while active, the UTC date when it is counted per day).
CREATE TABLE quota_usage (
	resource TEXT NOT NULL,
	scope    TEXT NOT NULL,
	period   TEXT NOT NULL,
	used     INTEGER NOT NULL,
	PRIMARY KEY (resource, scope, period)
);
