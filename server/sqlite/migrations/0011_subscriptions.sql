-- Subscriptions, their scheduled payments, and the payment a charge pays.
--
-- Due dates and other calendar days are TEXT YYYY-MM-DD (a day, not an
-- instant: the zone is the subscription's); times are Unix microseconds.
-- A pointer left nil is NULL: no initial amount, no start_on, no plan
-- (plan_type NULL; its two numbers are then 0), no successful payment or
-- retry date, no retry time. An absent id is '' as elsewhere; the next
-- payment and a payment's charge have no foreign key, since each is named
-- before it is written (the subscription before its first payment, the
-- payment before its charge).
CREATE TABLE subscriptions (
	id                              TEXT PRIMARY KEY,
	store_id                        TEXT NOT NULL REFERENCES stores (id),
	merchant_id                     TEXT NOT NULL REFERENCES merchants (id),
	token_id                        TEXT NOT NULL REFERENCES tokens (id),
	mode                            TEXT NOT NULL,
	amount                          INTEGER NOT NULL,
	currency                        TEXT NOT NULL,
	initial_amount                  INTEGER,
	period                          TEXT NOT NULL,
	cyclical_period                 TEXT NOT NULL,
	start_on                        TEXT,
	zone_id                         TEXT NOT NULL,
	preserve_end_of_month           INTEGER NOT NULL,
	retry_interval                  TEXT NOT NULL,
	termination_mode                TEXT NOT NULL,
	anchor                          TEXT NOT NULL,
	plan_type                       TEXT,
	plan_fixed_cycles               INTEGER NOT NULL,
	plan_fixed_cycle_amount         INTEGER NOT NULL,
	status                          TEXT NOT NULL,
	next_payment_id                 TEXT NOT NULL,
	payments_made                   INTEGER NOT NULL,
	amount_paid                     INTEGER NOT NULL,
	three_ds                        TEXT NOT NULL,
	descriptor                      TEXT NOT NULL,
	only_direct_currency            INTEGER NOT NULL,
	first_charge_authorization_only INTEGER NOT NULL,
	first_charge_capture_after      TEXT NOT NULL,
	metadata                        TEXT NOT NULL,
	from_browser                    INTEGER NOT NULL,
	email                           TEXT NOT NULL,
	last_four                       TEXT NOT NULL,
	created_on                      INTEGER NOT NULL,
	updated_on                      INTEGER NOT NULL
);
-- A merchant's list and a store's, in one mode, with or without statuses.
CREATE INDEX subscriptions_by_merchant ON subscriptions (merchant_id, mode, id);
CREATE INDEX subscriptions_by_store ON subscriptions (store_id, mode, id);
CREATE INDEX subscriptions_by_status ON subscriptions (merchant_id, mode, status, id);
-- The child side of the foreign key to tokens, which UpdateToken rewrites.
CREATE INDEX subscriptions_by_token ON subscriptions (token_id);

CREATE TABLE scheduled_payments (
	id                      TEXT PRIMARY KEY,
	subscription_id         TEXT NOT NULL REFERENCES subscriptions (id),
	store_id                TEXT NOT NULL REFERENCES stores (id),
	merchant_id             TEXT NOT NULL REFERENCES merchants (id),
	mode                    TEXT NOT NULL,
	cycle                   INTEGER NOT NULL,
	due_date                TEXT NOT NULL,
	zone_id                 TEXT NOT NULL,
	amount                  INTEGER NOT NULL,
	currency                TEXT NOT NULL,
	is_paid                 INTEGER NOT NULL,
	is_last_payment         INTEGER NOT NULL,
	successful_payment_date TEXT,
	retry_date              TEXT,
	retry_at                INTEGER,
	retry_interval          TEXT NOT NULL,
	terminate_with_status   TEXT NOT NULL,
	attempts                INTEGER NOT NULL,
	charge_id               TEXT NOT NULL,
	created_on              INTEGER NOT NULL,
	updated_on              INTEGER NOT NULL
);
-- A subscription's payments, in the order they were made.
CREATE INDEX scheduled_payments_by_subscription ON scheduled_payments (subscription_id, id);

-- The scheduled payment a charge pays; NULL for every other charge, and
-- for the charges from before subscriptions.
ALTER TABLE charges ADD COLUMN payment_id TEXT REFERENCES scheduled_payments (id);
CREATE INDEX charges_by_subscription ON charges (subscription_id, id);
CREATE INDEX charges_by_payment ON charges (payment_id, id);
