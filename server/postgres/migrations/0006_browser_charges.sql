-- Whether a charge was made by a browser (an app token without its
-- secret). A browser may follow only such a charge's approval (its issuer
-- token, its QR code), for a few minutes; charges from before this column
-- count as made by a server.
ALTER TABLE charges ADD COLUMN from_browser boolean NOT NULL DEFAULT false;
