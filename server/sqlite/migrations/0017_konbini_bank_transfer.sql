-- Konbini and bank transfers.
--
-- A token's data column holds what a token of a method other than card
-- keeps, as its method writes it (a wallet's brand, a konbini shopper's
-- store and phone, a bank transfer's virtual account): a new method needs
-- no new column. It was named wallet while only wallets had data.
ALTER TABLE tokens RENAME COLUMN wallet TO data;

-- What an approval tells its shopper beyond its kind and amount: a
-- konbini's payment and confirmation numbers, a bank transfer's account,
-- the deadline's extensions, the deposits so far.
ALTER TABLE approvals ADD COLUMN slip TEXT NOT NULL DEFAULT '{}';

-- A bank transfer's ledger: each deposit to its virtual account and the
-- payment of its charge out of the balance, in the order they happened
-- (ids are time-ordered).
CREATE TABLE transfer_ledger (
	id                 TEXT PRIMARY KEY,
	charge_id          TEXT NOT NULL,
	store_id           TEXT NOT NULL REFERENCES stores (id),
	merchant_id        TEXT NOT NULL REFERENCES merchants (id),
	mode               TEXT NOT NULL,
	kind               TEXT NOT NULL,
	amount             INTEGER NOT NULL,
	balance            INTEGER NOT NULL,
	deposited          INTEGER NOT NULL,
	currency           TEXT NOT NULL,
	payment_status     TEXT NOT NULL,
	virtual_account_id TEXT NOT NULL,
	created_on         INTEGER NOT NULL
);
CREATE INDEX transfer_ledger_by_charge ON transfer_ledger (charge_id, id);
