package postgres

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// dialect is how this engine stores values and spells what the two
// engines spell differently (sqlstore.Dialect); the package comment
// lists the types.
type dialect struct{}

func (dialect) Name() string { return "postgres" }

func (dialect) ID(id uuid.UUID) any { return id }

// OptionalID is the nil UUID for none.
func (dialect) OptionalID(id uuid.UUID) any { return id }

// EffectID is NULL for none.
func (dialect) EffectID(id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return id
}

func (dialect) Time(t time.Time) any { return t }

// MarksReads: Updates run side by side on REPEATABLE READ snapshots (the
// package comment says why their reads mark rows).
func (dialect) MarksReads() bool { return true }

func (dialect) NoLease() string { return "NULL" }

// PostgreSQL's lower(), upper() and ILIKE fold every letter the collation
// knows (É to é), so the conditions fold with translate() over A-Z alone,
// and find a term with strpos(), which gives % and _ no meaning.

// foldASCII is the SQL expression of expr with the ASCII capitals made
// small letters and every other character as it is.
func foldASCII(expr string) string {
	return "translate(" + expr + ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
}

func (dialect) ContainsFold(column string) string {
	return "strpos(" + foldASCII(column) + ", " + foldASCII("?::text") + ") > 0"
}

func (dialect) EqualFold(column string) string {
	return foldASCII(column) + " = " + foldASCII("?::text")
}

// IDText compares the id as text: a term that is no UUID is no error, it
// finds no id.
func (dialect) IDText(column string) string { return column + "::text" }

func (dialect) JSONText(column string, path ...string) string {
	return "(" + column + "::json #>> '{" + strings.Join(path, ",") + "}')"
}

func (dialect) JSONElements(column string) string {
	return "json_array_elements_text(" + column + "::json) AS j(value)"
}

// metadataValue is the SQL text of a JSON value v (an expression of type
// json) as payment.Metadata.Matches compares it: a string itself, a number
// as its JSON text as written (the json type keeps it: 1.50 stays 1.50 and
// 12345678901234567890 is not rounded), a boolean as true/false; objects,
// arrays and nulls are NULL and never match.
func metadataValue(v string) string {
	return `CASE json_typeof(` + v + `) WHEN 'string' THEN ` + v + ` #>> '{}'
		WHEN 'number' THEN ` + v + `::text WHEN 'boolean' THEN ` + v + `::text END`
}

func (dialect) MetadataMatches() string {
	return metadataValue("(metadata::json -> ?::text)") + " = ?"
}

func (dialect) MetadataValueIs() string {
	return `EXISTS (SELECT 1 FROM json_each(metadata::json) AS j WHERE ` + metadataValue("j.value") + ` = ?)`
}

func (dialect) InsertionOrder() string { return "seq" }

// Bytewise sorts COLLATE "C", byte by byte, whatever the database's
// collation.
func (dialect) Bytewise(expr string) string { return expr + ` COLLATE "C"` }

func (dialect) WholeTable(table string) string { return table }

func (dialect) SkipLocked() string { return " FOR UPDATE SKIP LOCKED" }

// ClaimWork locks the items it takes FOR UPDATE SKIP LOCKED: a claim
// running at the same time in another transaction (or process) skips the
// rows this one is taking instead of waiting for them, and takes others.
// A row another claim took and committed meanwhile is checked again
// against the WHERE clause, so its new lease keeps it out. The CTE runs
// the locking SELECT once, whatever plan the UPDATE gets.
func (dialect) ClaimWork(columns string) string {
	return `WITH due AS (
			SELECT seq FROM work WHERE due_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
			ORDER BY due_at, seq LIMIT ? FOR UPDATE SKIP LOCKED),
		claimed AS (
			UPDATE work SET claimed_by = ?, lease_until = ? FROM due WHERE work.seq = due.seq
			RETURNING ` + qualified("work", columns) + `)
		SELECT ` + columns + ` FROM claimed`
}

// qualified prefixes each of a list of columns with table.
func qualified(table, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = table + "." + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}
