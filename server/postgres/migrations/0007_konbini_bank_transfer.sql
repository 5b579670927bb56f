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
ALTER TABLE approvals ADD COLUMN slip text NOT NULL DEFAULT '{}';

-- A bank transfer's ledger: each deposit to its virtual account and the
-- payment of its charge out of the balance, in the order they happened
-- (ids are time-ordered).
CREATE TABLE transfer_ledger (
	id                 uuid PRIMARY KEY,
	charge_id          uuid NOT NULL,
	store_id           uuid NOT NULL REFERENCES stores (id),
	merchant_id        uuid NOT NULL REFERENCES merchants (id),
	mode               text NOT NULL,
	kind               text NOT NULL,
	amount             bigint NOT NULL,
	balance            bigint NOT NULL,
	deposited          bigint NOT NULL,
	currency           text NOT NULL,
	payment_status     text NOT NULL,
	virtual_account_id text NOT NULL,
	created_on         timestamptz NOT NULL
);
CREATE INDEX transfer_ledger_by_charge ON transfer_ledger (charge_id, id);
