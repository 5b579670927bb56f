-- What a request made under its idempotency key (its effect): the kind of
-- object (charge, refund, cancel, capture, subscription), its store, the
-- charge it is of (refunds, cancels, captures; NULL otherwise) and its id.
-- It is written in the transaction that makes the object, only while that
-- request's reservation holds lock_id, and a takeover of an abandoned
-- reservation keeps it: a retry after a crash is answered with the object
-- instead of making a second one. All NULL while nothing was made.
ALTER TABLE idempotency_keys
	ADD COLUMN effect_kind text,
	ADD COLUMN effect_store_id uuid,
	ADD COLUMN effect_charge_id uuid,
	ADD COLUMN effect_id uuid;
