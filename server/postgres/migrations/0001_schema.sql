-- Kessai's schema on PostgreSQL, as SQLite's migrations 0001-0011 left
-- theirs. Ids are uuid; the nil UUID stands for an absent id where SQLite
-- stores '' (a merchant-level app token's, webhook's or event's store), and
-- NULL where a foreign key must hold only when the id is set. Times are
-- timestamptz to the microsecond. Metadata, event data and the other JSON
-- documents are text: their exact bytes come back (jsonb would normalise
-- numbers, whitespace and key order). Calendar days are date.

-- Merchants, their console users, stores, app tokens and resource quotas.
CREATE TABLE merchants (
	id         uuid PRIMARY KEY,
	name       text NOT NULL,
	email      text NOT NULL,
	verified   boolean NOT NULL,
	created_on timestamptz NOT NULL
);

CREATE TABLE users (
	id            uuid PRIMARY KEY,
	merchant_id   uuid NOT NULL REFERENCES merchants (id),
	email         text NOT NULL UNIQUE,
	password_hash bytea NOT NULL,
	created_on    timestamptz NOT NULL
);

CREATE TABLE stores (
	id            uuid PRIMARY KEY,
	merchant_id   uuid NOT NULL REFERENCES merchants (id),
	name          text NOT NULL,
	pci_compliant boolean NOT NULL,
	settings      text NOT NULL,
	created_on    timestamptz NOT NULL
);
CREATE INDEX stores_by_merchant ON stores (merchant_id, id);

-- store_id is the nil UUID for a merchant token; domains a JSON list.
CREATE TABLE app_tokens (
	id          uuid PRIMARY KEY,
	merchant_id uuid NOT NULL REFERENCES merchants (id),
	store_id    uuid NOT NULL,
	creator_id  uuid NOT NULL,
	mode        text NOT NULL,
	domains     text NOT NULL,
	secret_hash bytea NOT NULL,
	jwt         text NOT NULL,
	created_on  timestamptz NOT NULL,
	revoked_on  timestamptz
);
CREATE INDEX app_tokens_by_owner ON app_tokens (merchant_id, store_id, id);

-- One counter per limited resource, scope and period ('' when the resource
-- is counted while active, the UTC date when it is counted per day).
CREATE TABLE quota_usage (
	resource text NOT NULL,
	scope    text NOT NULL,
	period   text NOT NULL,
	used     bigint NOT NULL,
	PRIMARY KEY (resource, scope, period)
);

-- Transaction tokens, charges, refunds, cancels and the ledger. Card
-- numbers and CVCs are only ever stored sealed with the id of the key that
-- sealed them; in the clear, at most BIN and last four.
CREATE TABLE tokens (
	id            uuid PRIMARY KEY,
	store_id      uuid NOT NULL REFERENCES stores (id),
	merchant_id   uuid NOT NULL REFERENCES merchants (id),
	mode          text NOT NULL,
	payment_type  text NOT NULL,
	type          text NOT NULL,
	usage_limit   text NOT NULL,
	email         text NOT NULL,
	active        boolean NOT NULL,
	used          boolean NOT NULL,
	metadata      text NOT NULL,
	customer_id   text NOT NULL,
	ip_address    text NOT NULL,
	cardholder    text NOT NULL,
	exp_month     integer NOT NULL,
	exp_year      integer NOT NULL,
	card_bin      text NOT NULL,
	last_four     text NOT NULL,
	brand         text NOT NULL,
	billing       text NOT NULL,
	number_key_id text NOT NULL,
	number_sealed bytea NOT NULL,
	cvc_key_id    text NOT NULL,
	cvc_sealed    bytea,
	cvv_authorize text NOT NULL,
	three_ds      text NOT NULL,
	from_browser  boolean NOT NULL,
	last_used_on  timestamptz,
	created_on    timestamptz NOT NULL,
	updated_on    timestamptz NOT NULL,
	wallet        text NOT NULL
);
CREATE INDEX tokens_by_store ON tokens (store_id, id);
CREATE INDEX tokens_by_merchant ON tokens (merchant_id, id);

CREATE TABLE charges (
	id                      uuid PRIMARY KEY,
	store_id                uuid NOT NULL REFERENCES stores (id),
	merchant_id             uuid NOT NULL REFERENCES merchants (id),
	token_id                uuid NOT NULL REFERENCES tokens (id),
	token_type              text NOT NULL,
	subscription_id         uuid NOT NULL,
	mode                    text NOT NULL,
	requested_amount        bigint NOT NULL,
	currency                text NOT NULL,
	charged_amount          bigint,
	capture                 boolean NOT NULL,
	capture_at              timestamptz,
	capture_state           text NOT NULL,
	capture_amount          bigint NOT NULL,
	descriptor              text NOT NULL,
	status                  text NOT NULL,
	error                   text,
	-- Kept apart from error so that the duplicate-charge rule can tell
	-- rejected duplicates from charges that were processed.
	error_code              integer,
	metadata                text NOT NULL,
	three_ds                text NOT NULL,
	redirect_endpoint       text NOT NULL,
	merchant_transaction_id text NOT NULL,
	ip_address              text NOT NULL,
	last_four               text NOT NULL,
	email                   text NOT NULL,
	only_direct_currency    boolean NOT NULL,
	created_on              timestamptz NOT NULL,
	updated_on              timestamptz NOT NULL,
	payment_type            text NOT NULL,
	payment_id              uuid -- REFERENCES scheduled_payments (id), added below
);
CREATE INDEX charges_by_store ON charges (store_id, id);
CREATE INDEX charges_by_merchant ON charges (merchant_id, id);
-- The duplicate-charge rule's lookup.
CREATE INDEX charges_by_token ON charges (token_id, created_on);
CREATE INDEX charges_by_subscription ON charges (subscription_id, id);
CREATE INDEX charges_by_payment ON charges (payment_id, id);

CREATE TABLE refunds (
	id          uuid PRIMARY KEY,
	store_id    uuid NOT NULL REFERENCES stores (id),
	merchant_id uuid NOT NULL REFERENCES merchants (id),
	charge_id   uuid NOT NULL REFERENCES charges (id),
	mode        text NOT NULL,
	status      text NOT NULL,
	amount      bigint NOT NULL,
	currency    text NOT NULL,
	reason      text NOT NULL,
	message     text NOT NULL,
	error       text,
	metadata    text NOT NULL,
	created_on  timestamptz NOT NULL,
	updated_on  timestamptz NOT NULL
);
CREATE INDEX refunds_by_charge ON refunds (charge_id, id);

CREATE TABLE cancels (
	id          uuid PRIMARY KEY,
	store_id    uuid NOT NULL REFERENCES stores (id),
	merchant_id uuid NOT NULL REFERENCES merchants (id),
	charge_id   uuid NOT NULL REFERENCES charges (id),
	mode        text NOT NULL,
	status      text NOT NULL,
	error       text,
	metadata    text NOT NULL,
	created_on  timestamptz NOT NULL,
	updated_on  timestamptz NOT NULL
);
CREATE INDEX cancels_by_charge ON cancels (charge_id, id);

-- One line per charge and per refund; id is the resource's id.
CREATE TABLE ledger (
	id          uuid PRIMARY KEY,
	store_id    uuid NOT NULL REFERENCES stores (id),
	merchant_id uuid NOT NULL REFERENCES merchants (id),
	charge_id   uuid NOT NULL,
	type        text NOT NULL,
	status      text NOT NULL,
	amount      bigint NOT NULL,
	currency    text NOT NULL,
	mode        text NOT NULL,
	metadata    text NOT NULL,
	created_on  timestamptz NOT NULL,
	updated_on  timestamptz NOT NULL
);
CREATE INDEX ledger_by_store ON ledger (store_id, id);
CREATE INDEX ledger_by_merchant ON ledger (merchant_id, id);

-- Idempotency keys: one row per (scope, key), in flight while its request
-- runs (lock_id names that reservation), completed once the answer is
-- stored in status, header (a JSON object) and body; swept once expired.
CREATE TABLE idempotency_keys (
	scope       text NOT NULL,
	idem_key    text NOT NULL,
	fingerprint bytea NOT NULL,
	lock_id     text NOT NULL,
	state       text NOT NULL,
	created_on  timestamptz NOT NULL,
	locked_on   timestamptz NOT NULL,
	expires_on  timestamptz NOT NULL,
	status      integer,
	header      text,
	body        bytea,
	PRIMARY KEY (scope, idem_key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_on);

-- The work queue: one row per item, written in the transaction of the
-- state change that needs it. An item is claimable when due_at is at or
-- before now and it holds no lease (lease_until NULL, or at or before
-- now); seq orders items due at the same time in the order they came.
CREATE TABLE work (
	seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind        text NOT NULL,
	object_id   uuid NOT NULL,
	attempts    integer NOT NULL DEFAULT 0,
	due_at      timestamptz NOT NULL,
	claimed_by  text NOT NULL DEFAULT '',
	lease_until timestamptz,
	last_error  text NOT NULL DEFAULT '',
	UNIQUE (kind, object_id)
);
CREATE INDEX work_by_due ON work (due_at, seq);

-- What a shopper approves on a page that is not the merchant's. seq breaks
-- a tie of creation times: the latest approval of a resource counts.
CREATE TABLE approvals (
	key           text PRIMARY KEY,
	seq           bigint GENERATED ALWAYS AS IDENTITY,
	kind          text NOT NULL,
	resource_type text NOT NULL,
	resource_id   uuid NOT NULL,
	store_id      uuid NOT NULL REFERENCES stores (id),
	merchant_id   uuid NOT NULL REFERENCES merchants (id),
	mode          text NOT NULL,
	brand         text NOT NULL,
	call_method   text NOT NULL,
	amount        bigint NOT NULL,
	currency      text NOT NULL,
	last_four     text NOT NULL,
	tries         integer NOT NULL,
	status        text NOT NULL,
	expires_on    timestamptz NOT NULL,
	created_on    timestamptz NOT NULL,
	updated_on    timestamptz NOT NULL
);
CREATE INDEX approvals_by_resource ON approvals (resource_id, created_on, seq);

-- Webhooks (store_id the nil UUID: the merchant's, for all its stores),
-- the events merchants are told of, and their deliveries. No constraint
-- makes URLs unique: the domain refuses a URL the owner already has in
-- that mode, compared without regard to ASCII case.
CREATE TABLE webhooks (
	id            uuid PRIMARY KEY,
	merchant_id   uuid NOT NULL REFERENCES merchants (id),
	store_id      uuid NOT NULL,
	mode          text NOT NULL,
	triggers      text NOT NULL,
	url           text NOT NULL,
	auth_token    text NOT NULL,
	active        boolean NOT NULL,
	secret_key_id text NOT NULL,
	secret_sealed bytea NOT NULL,
	created_on    timestamptz NOT NULL,
	updated_on    timestamptz NOT NULL
);
CREATE INDEX webhooks_by_merchant ON webhooks (merchant_id, id);
CREATE INDEX webhooks_by_owner ON webhooks (merchant_id, store_id, mode, id);

CREATE TABLE events (
	id          uuid PRIMARY KEY,
	merchant_id uuid NOT NULL REFERENCES merchants (id),
	store_id    uuid NOT NULL,
	mode        text NOT NULL,
	name        text NOT NULL,
	data        text NOT NULL,
	created_on  timestamptz NOT NULL
);
CREATE INDEX events_by_merchant ON events (merchant_id, mode, id);
CREATE INDEX events_by_store ON events (store_id, mode, id);

CREATE TABLE deliveries (
	id           uuid PRIMARY KEY,
	event_id     uuid NOT NULL REFERENCES events (id),
	webhook_id   uuid NOT NULL REFERENCES webhooks (id),
	merchant_id  uuid NOT NULL REFERENCES merchants (id),
	store_id     uuid NOT NULL,
	status       text NOT NULL,
	attempts     integer NOT NULL,
	last_error   text NOT NULL,
	last_status  integer NOT NULL,
	created_on   timestamptz NOT NULL,
	updated_on   timestamptz NOT NULL,
	delivered_on timestamptz
);
CREATE INDEX deliveries_by_webhook ON deliveries (webhook_id, id);
CREATE UNIQUE INDEX deliveries_by_event ON deliveries (webhook_id, event_id);

-- Subscriptions and their scheduled payments. A pointer left nil is NULL;
-- the next payment and a payment's charge have no foreign key, since each
-- is named before it is written.
CREATE TABLE subscriptions (
	id                              uuid PRIMARY KEY,
	store_id                        uuid NOT NULL REFERENCES stores (id),
	merchant_id                     uuid NOT NULL REFERENCES merchants (id),
	token_id                        uuid NOT NULL REFERENCES tokens (id),
	mode                            text NOT NULL,
	amount                          bigint NOT NULL,
	currency                        text NOT NULL,
	initial_amount                  bigint,
	period                          text NOT NULL,
	cyclical_period                 text NOT NULL,
	start_on                        date,
	zone_id                         text NOT NULL,
	preserve_end_of_month           boolean NOT NULL,
	retry_interval                  text NOT NULL,
	termination_mode                text NOT NULL,
	anchor                          date NOT NULL,
	plan_type                       text,
	plan_fixed_cycles               integer NOT NULL,
	plan_fixed_cycle_amount         bigint NOT NULL,
	status                          text NOT NULL,
	next_payment_id                 uuid NOT NULL,
	payments_made                   integer NOT NULL,
	amount_paid                     bigint NOT NULL,
	three_ds                        text NOT NULL,
	descriptor                      text NOT NULL,
	only_direct_currency            boolean NOT NULL,
	first_charge_authorization_only boolean NOT NULL,
	first_charge_capture_after      text NOT NULL,
	metadata                        text NOT NULL,
	from_browser                    boolean NOT NULL,
	email                           text NOT NULL,
	last_four                       text NOT NULL,
	created_on                      timestamptz NOT NULL,
	updated_on                      timestamptz NOT NULL
);
CREATE INDEX subscriptions_by_merchant ON subscriptions (merchant_id, mode, id);
CREATE INDEX subscriptions_by_store ON subscriptions (store_id, mode, id);
CREATE INDEX subscriptions_by_status ON subscriptions (merchant_id, mode, status, id);
CREATE INDEX subscriptions_by_token ON subscriptions (token_id);

CREATE TABLE scheduled_payments (
	id                      uuid PRIMARY KEY,
	subscription_id         uuid NOT NULL REFERENCES subscriptions (id),
	store_id                uuid NOT NULL REFERENCES stores (id),
	merchant_id             uuid NOT NULL REFERENCES merchants (id),
	mode                    text NOT NULL,
	cycle                   integer NOT NULL,
	due_date                date NOT NULL,
	zone_id                 text NOT NULL,
	amount                  bigint NOT NULL,
	currency                text NOT NULL,
	is_paid                 boolean NOT NULL,
	is_last_payment         boolean NOT NULL,
	successful_payment_date date,
	retry_date              date,
	retry_at                timestamptz,
	retry_interval          text NOT NULL,
	terminate_with_status   text NOT NULL,
	attempts                integer NOT NULL,
	charge_id               uuid NOT NULL,
	created_on              timestamptz NOT NULL,
	updated_on              timestamptz NOT NULL
);
CREATE INDEX scheduled_payments_by_subscription ON scheduled_payments (subscription_id, id);

ALTER TABLE charges ADD FOREIGN KEY (payment_id) REFERENCES scheduled_payments (id);
