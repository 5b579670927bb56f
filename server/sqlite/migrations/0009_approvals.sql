-- Online and merchant-presented QR wallets, and 3-D Secure.
--
-- A wallet token keeps its wallet (brand, call method, OS, user id) as
-- JSON; card tokens keep '{}'. A charge records its token's payment type,
-- so that lists and issuer tokens need not read the token; older charges
-- were all card charges.
ALTER TABLE tokens ADD COLUMN wallet TEXT NOT NULL DEFAULT '{}';
ALTER TABLE charges ADD COLUMN payment_type TEXT NOT NULL DEFAULT 'card';

-- What a shopper approves on a page that is not the merchant's: a 3-D
-- Secure challenge or a wallet payment. key is the secret part of the
-- page's address. A resource (a charge or a token) may have had several,
-- one after another; the latest is the one that counts.
CREATE TABLE approvals (
	key           TEXT PRIMARY KEY,
	kind          TEXT NOT NULL,
	resource_type TEXT NOT NULL,
	resource_id   TEXT NOT NULL,
	store_id      TEXT NOT NULL REFERENCES stores (id),
	merchant_id   TEXT NOT NULL REFERENCES merchants (id),
	mode          TEXT NOT NULL,
	brand         TEXT NOT NULL,
	call_method   TEXT NOT NULL,
	amount        INTEGER NOT NULL,
	currency      TEXT NOT NULL,
	last_four     TEXT NOT NULL,
	tries         INTEGER NOT NULL,
	status        TEXT NOT NULL,
	expires_on    INTEGER NOT NULL,
	created_on    INTEGER NOT NULL,
	updated_on    INTEGER NOT NULL
);
CREATE INDEX approvals_by_resource ON approvals (resource_id, created_on);
