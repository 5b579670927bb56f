-- Whether a charge was asked to be taken in its own currency only
-- (only_direct_currency); charges from before this column were not.
ALTER TABLE charges ADD COLUMN only_direct_currency INTEGER NOT NULL DEFAULT 0;
