-- Transaction tokens, charges, refunds, cancels and the ledger.
-- Card numbers and CVCs are only ever stored sealed (AES-256-GCM) with the
-- id of the key that sealed them; in the clear, at most BIN and last four.
CREATE TABLE tokens (
	id             TEXT PRIMARY KEY,
	store_id       TEXT NOT NULL REFERENCES stores (id),
	merchant_id    TEXT NOT NULL REFERENCES merchants (id),
	mode           TEXT NOT NULL,
	payment_type   TEXT NOT NULL,
	type           TEXT NOT NULL,
	usage_limit    TEXT NOT NULL,
	email          TEXT NOT NULL,
	active         INTEGER NOT NULL,
	used           INTEGER NOT NULL,
	metadata       TEXT NOT NULL,
	customer_id    TEXT NOT NULL,
	ip_address     TEXT NOT NULL,
	cardholder     TEXT NOT NULL,
	exp_month      INTEGER NOT NULL,
	exp_year       INTEGER NOT NULL,
	card_bin       TEXT NOT NULL,
	last_four      TEXT NOT NULL,
	brand          TEXT NOT NULL,
	billing        TEXT NOT NULL,
	number_key_id  TEXT NOT NULL,
	number_sealed  BLOB NOT NULL,
	cvc_key_id     TEXT NOT NULL,
	cvc_sealed     BLOB,
	cvv_authorize  TEXT NOT NULL,
	three_ds       TEXT NOT NULL,
	last_used_on   INTEGER,
	created_on     INTEGER NOT NULL,
	updated_on     INTEGER NOT NULL
);
CREATE INDEX tokens_by_store ON tokens (store_id, id);
CREATE INDEX tokens_by_merchant ON tokens (merchant_id, id);

CREATE TABLE charges (
	id                      TEXT PRIMARY KEY,
	store_id                TEXT NOT NULL REFERENCES stores (id),
	merchant_id             TEXT NOT NULL REFERENCES merchants (id),
	token_id                TEXT NOT NULL REFERENCES tokens (id),
	token_type              TEXT NOT NULL,
	subscription_id         TEXT NOT NULL,
	mode                    TEXT NOT NULL,
	requested_amount        INTEGER NOT NULL,
	currency                TEXT NOT NULL,
	charged_amount          INTEGER,
	capture                 INTEGER NOT NULL,
	capture_at              INTEGER,
	capture_state           TEXT NOT NULL,
	capture_amount          INTEGER NOT NULL,
	descriptor              TEXT NOT NULL,
	status                  TEXT NOT NULL,
	error                   TEXT,
	error_code              INTEGER,
	metadata                TEXT NOT NULL,
	three_ds                TEXT NOT NULL,
	redirect_endpoint       TEXT NOT NULL,
	merchant_transaction_id TEXT NOT NULL,
	ip_address              TEXT NOT NULL,
	last_four               TEXT NOT NULL,
	email                   TEXT NOT NULL,
	created_on              INTEGER NOT NULL,
	updated_on              INTEGER NOT NULL
);
CREATE INDEX charges_by_store ON charges (store_id, id);
CREATE INDEX charges_by_merchant ON charges (merchant_id, id);
CREATE INDEX charges_by_token ON charges (token_id, created_on);
-- The worker's queue: unfinished charges only, so the index stays small.
CREATE INDEX charges_unfinished ON charges (id) WHERE status = 'pending' OR capture_state = 'requested';

CREATE TABLE refunds (
	id          TEXT PRIMARY KEY,
	store_id    TEXT NOT NULL REFERENCES stores (id),
	merchant_id TEXT NOT NULL REFERENCES merchants (id),
	charge_id   TEXT NOT NULL REFERENCES charges (id),
	mode        TEXT NOT NULL,
	status      TEXT NOT NULL,
	amount      INTEGER NOT NULL,
	currency    TEXT NOT NULL,
	reason      TEXT NOT NULL,
	message     TEXT NOT NULL,
	error       TEXT,
	metadata    TEXT NOT NULL,
	created_on  INTEGER NOT NULL,
	updated_on  INTEGER NOT NULL
);
CREATE INDEX refunds_by_charge ON refunds (charge_id, id);
CREATE INDEX refunds_pending ON refunds (id) WHERE status = 'pending';

CREATE TABLE cancels (
	id          TEXT PRIMARY KEY,
	store_id    TEXT NOT NULL REFERENCES stores (id),
	merchant_id TEXT NOT NULL REFERENCES merchants (id),
	charge_id   TEXT NOT NULL REFERENCES charges (id),
	mode        TEXT NOT NULL,
	status      TEXT NOT NULL,
	error       TEXT,
	metadata    TEXT NOT NULL,
	created_on  INTEGER NOT NULL,
	updated_on  INTEGER NOT NULL
);
CREATE INDEX cancels_by_charge ON cancels (charge_id, id);
CREATE INDEX cancels_pending ON cancels (id) WHERE status = 'pending';

-- One line per charge and per refund; id is the resource's id.
CREATE TABLE ledger (
	id          TEXT PRIMARY KEY,
	store_id    TEXT NOT NULL REFERENCES stores (id),
	merchant_id TEXT NOT NULL REFERENCES merchants (id),
	charge_id   TEXT NOT NULL,
	type        TEXT NOT NULL,
	status      TEXT NOT NULL,
	amount      INTEGER NOT NULL,
	currency    TEXT NOT NULL,
	mode        TEXT NOT NULL,
	metadata    TEXT NOT NULL,
	created_on  INTEGER NOT NULL,
	updated_on  INTEGER NOT NULL
);
CREATE INDEX ledger_by_store ON ledger (store_id, id);
CREATE INDEX ledger_by_merchant ON ledger (merchant_id, id);
