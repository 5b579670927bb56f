package sqlite

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// dialect is how this engine stores values and spells what the two
// engines spell differently (sqlstore.Dialect). Ids are TEXT, the empty
// string where there is none (NULL in a column with a foreign key), times
// INTEGER Unix microseconds, calendar days TEXT YYYY-MM-DD. SQLite's
// lower() and NOCASE fold ASCII letters only, which is the domain's rule.
type dialect struct{}

func (dialect) Name() string { return "sqlite" }

func (dialect) ID(id uuid.UUID) any { return id.String() }

// OptionalID stores uuid.Nil as the empty string, so that "no store"
// reads as absent.
func (dialect) OptionalID(id uuid.UUID) any {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}

// EffectID is ” for none, as migration 0015 says.
func (d dialect) EffectID(id uuid.UUID) any { return d.OptionalID(id) }

func (dialect) Time(t time.Time) any { return t.UnixMicro() }

// MarksReads is false: one writer at a time (package comment), so no two
// Updates ever decide on snapshots that miss each other.
func (dialect) MarksReads() bool { return false }

func (dialect) NoLease() string { return "0" }

// ContainsFold uses instr, which, unlike LIKE, gives % and _ no meaning.
func (dialect) ContainsFold(column string) string {
	return "instr(lower(" + column + "), lower(?)) > 0"
}

func (dialect) EqualFold(column string) string { return column + " = ? COLLATE NOCASE" }

func (dialect) IDText(column string) string { return column }

func (dialect) JSONText(column string, path ...string) string {
	return "json_extract(" + column + ", '$." + strings.Join(path, ".") + "')"
}

func (dialect) JSONElements(column string) string { return "json_each(" + column + ") AS j" }

// MetadataMatches compares a number by its JSON text as written (->
// keeps it; json_extract would round 12345678901234567890 through a float
// and turn 1.50 into 1.5), a boolean as true/false (json_extract gives
// 1/0); arrays and nulls never match.
func (dialect) MetadataMatches() string {
	const path = "'$.' || json_quote(?)"
	return `CASE json_type(metadata, ` + path + `)
			WHEN 'text' THEN json_extract(metadata, ` + path + `)
			WHEN 'integer' THEN metadata -> (` + path + `)
			WHEN 'real' THEN metadata -> (` + path + `)
			WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END = ?`
}

// metadataValueIs: a string itself, a number as its JSON text, a boolean
// as true/false; arrays never match.
var metadataValueIs = strings.Join(strings.Fields(`EXISTS (SELECT 1 FROM json_each(metadata) AS j WHERE
	CASE j.type WHEN 'text' THEN j.value
		WHEN 'integer' THEN metadata -> j.fullkey
		WHEN 'real' THEN metadata -> j.fullkey
		WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END = ?)`), " ")

func (dialect) MetadataValueIs() string { return metadataValueIs }

func (dialect) InsertionOrder() string { return "rowid" }

// Bytewise needs nothing: SQLite's default collation is BINARY.
func (dialect) Bytewise(expr string) string { return expr }

// WholeTable makes a read of every row one sequential scan: left to
// itself SQLite walks an index to group without sorting and looks every
// row up, about three times slower.
func (dialect) WholeTable(table string) string { return table + " NOT INDEXED" }

// SkipLocked needs nothing: one writer at a time.
func (dialect) SkipLocked() string { return "" }

// ClaimWork is one statement in a write transaction, and SQLite has one
// writer at a time (across processes too), so no two claims interleave.
// RETURNING gives the rows in no particular order.
func (dialect) ClaimWork(columns string) string {
	return `UPDATE work SET claimed_by = ?4, lease_until = ?5
		WHERE seq IN (SELECT seq FROM work WHERE due_at <= ?1 AND lease_until <= ?2 ORDER BY due_at, seq LIMIT ?3)
		RETURNING ` + columns
}
