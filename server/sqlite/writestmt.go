package sqlite

import "database/sql"

// maxWriteStmts bounds the statements the write connection keeps
// (keptstmt.go); the domain's writes use a few dozen texts, and list
// queries built from their filters, or migration scripts, are not worth
// keeping past that.
const maxWriteStmts = 256

// openWritePool opens the write pool on dsn: a statement-keeping
// connection whose transactions begin IMMEDIATE, holding the write lock
// from their first read (see the package comment).
func openWritePool(dsn string) (*sql.DB, error) {
	return openKeptPool(dsn, "BEGIN IMMEDIATE", maxWriteStmts)
}
