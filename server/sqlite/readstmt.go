package sqlite

import "database/sql"

// maxReadStmts bounds the statements a read connection keeps (keptstmt.go);
// list queries are built from their filters, so their texts are many but
// few are hot.
const maxReadStmts = 128

// openReadPool opens the read pool on dsn: statement-keeping connections
// whose transactions begin with a plain BEGIN, a snapshot taken at the
// first read.
func openReadPool(dsn string) (*sql.DB, error) {
	return openKeptPool(dsn, "BEGIN", maxReadStmts)
}
