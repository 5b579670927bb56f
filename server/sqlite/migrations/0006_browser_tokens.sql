-- Whether a token was made by a browser (an app token without its secret).
-- A browser may charge only such a token, once, right after making it;
-- tokens from before this column count as made by a server.
ALTER TABLE tokens ADD COLUMN from_browser INTEGER NOT NULL DEFAULT 0;
