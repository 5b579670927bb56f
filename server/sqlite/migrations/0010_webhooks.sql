-- Webhooks, the events merchants are told of, and their deliveries.
--
-- A webhook is a store's or, with store_id '', its merchant's for all its
-- stores. Its triggers are a JSON list of event names; its signing secret
-- is only ever stored sealed, with the id of the key that sealed it. No
-- constraint makes URLs unique: the domain refuses a URL the owner already
-- has in that mode, compared without regard to ASCII case (NOCASE folds
-- ASCII letters only).
CREATE TABLE webhooks (
	id            TEXT PRIMARY KEY,
	merchant_id   TEXT NOT NULL REFERENCES merchants (id),
	store_id      TEXT NOT NULL,
	mode          TEXT NOT NULL,
	triggers      TEXT NOT NULL,
	url           TEXT NOT NULL,
	auth_token    TEXT NOT NULL,
	active        INTEGER NOT NULL,
	secret_key_id TEXT NOT NULL,
	secret_sealed BLOB NOT NULL,
	created_on    INTEGER NOT NULL,
	updated_on    INTEGER NOT NULL
);
-- A merchant's list; one owner's list, and the active webhooks of a store
-- and of its merchant; the owner's URLs.
CREATE INDEX webhooks_by_merchant ON webhooks (merchant_id, id);
CREATE INDEX webhooks_by_owner ON webhooks (merchant_id, store_id, mode, id);
CREATE INDEX webhooks_by_url ON webhooks (merchant_id, store_id, mode, url COLLATE NOCASE);

-- An event is written in the transaction of the change it tells of; data
-- is the resource's JSON as the API showed it then, kept as its exact
-- text. Events stay when a webhook goes: the feed reads them too.
CREATE TABLE events (
	id          TEXT PRIMARY KEY,
	merchant_id TEXT NOT NULL REFERENCES merchants (id),
	store_id    TEXT NOT NULL,
	mode        TEXT NOT NULL,
	name        TEXT NOT NULL,
	data        TEXT NOT NULL,
	created_on  INTEGER NOT NULL
);
-- The feed, oldest first after a given event: a merchant's, or a store's.
CREATE INDEX events_by_merchant ON events (merchant_id, mode, id);
CREATE INDEX events_by_store ON events (store_id, mode, id);

-- One event on its way to one webhook, and then its line in the webhook's
-- log; a redelivery starts the same row over. Deleting a webhook deletes
-- its deliveries. delivered_on is NULL until a receiver accepted it.
CREATE TABLE deliveries (
	id           TEXT PRIMARY KEY,
	event_id     TEXT NOT NULL REFERENCES events (id),
	webhook_id   TEXT NOT NULL REFERENCES webhooks (id),
	merchant_id  TEXT NOT NULL REFERENCES merchants (id),
	store_id     TEXT NOT NULL,
	status       TEXT NOT NULL,
	attempts     INTEGER NOT NULL,
	last_error   TEXT NOT NULL,
	last_status  INTEGER NOT NULL,
	created_on   INTEGER NOT NULL,
	updated_on   INTEGER NOT NULL,
	delivered_on INTEGER
);
-- A webhook's log, and the delivery of one event to it.
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, id);
CREATE UNIQUE INDEX deliveries_by_event ON deliveries (webhook_id, event_id);
