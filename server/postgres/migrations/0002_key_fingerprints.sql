-- A fingerprint of each key the gateway's processes must share (the
-- signing key, the card key): HMAC-SHA256 of a fixed label under the key,
-- which reveals nothing of it. The first process records them; a process
-- whose key gives another fingerprint refuses to start, instead of minting
-- tokens the others refuse or sealing cards they cannot open.
CREATE TABLE key_fingerprints (
	name        text PRIMARY KEY,
	fingerprint bytea NOT NULL,
	recorded_on timestamptz NOT NULL
);
