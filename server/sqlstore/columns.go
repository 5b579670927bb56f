package sqlstore

import (
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// How values are written and read back, whichever way the engine stores
// them. Ids are scanned as text (SQLite's TEXT; the drivers give
// PostgreSQL's uuid as its text too) and parsed strictly; times and days
// through the scanners below, which take either engine's form.

// idColumns parses the id and day columns of one row of table. The empty
// string is how SQLite stores an absent id and reads as uuid.Nil; anything
// else must be a UUID as uuid.UUID.String writes it. A corrupt value is an
// error naming the table and column (the first one is kept), never
// uuid.Nil passing for "absent".
type idColumns struct {
	d     Dialect
	table string
	err   error
}

// fail keeps the first corrupt value's error: "sqlite: corrupt id in
// charges.token_id: …".
func (c *idColumns) fail(what, column string, err error) {
	if c.err == nil {
		c.err = fmt.Errorf("%s: corrupt %s in %s.%s: %w", c.d.Name(), what, c.table, column, err)
	}
}

func (c *idColumns) parse(column, s string) uuid.UUID {
	if s == "" {
		return uuid.Nil
	}
	id, err := uuid.Parse(s)
	if err == nil && !canonicalID(id, s) {
		err = errors.New("not in the canonical form")
	}
	if err != nil {
		c.fail("id", column, err)
		return uuid.Nil
	}
	return id
}

// parseNull parses a nullable id column: NULL is absent; anything else
// must be a UUID (not even the empty string).
func (c *idColumns) parseNull(column string, s sql.NullString) uuid.UUID {
	if !s.Valid {
		return uuid.Nil
	}
	if s.String == "" {
		c.fail("id", column, errors.New("empty"))
		return uuid.Nil
	}
	return c.parse(column, s.String)
}

// date parses a day column of the row; a value that is not YYYY-MM-DD is
// an error naming the table and column, like a corrupt id.
func (c *idColumns) date(column string, d day) payment.Date {
	v, ok := payment.ParseDate(d.s)
	if !ok {
		c.fail("date", column, fmt.Errorf("%q", d.s))
	}
	return v
}

func (c *idColumns) nullDate(column string, d day) *payment.Date {
	if !d.valid {
		return nil
	}
	v := c.date(column, d)
	return &v
}

// canonicalID reports whether s is id as uuid.UUID.String writes it
// (lower-case hex with dashes), without allocating its string: a charge's
// read parses six ids.
func canonicalID(id uuid.UUID, s string) bool {
	var b [36]byte
	hex.Encode(b[:8], id[:4])
	b[8] = '-'
	hex.Encode(b[9:13], id[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], id[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], id[8:10])
	b[23] = '-'
	hex.Encode(b[24:], id[10:])
	return string(b[:]) == s
}

// nullID stores uuid.Nil as NULL, for an id column with a foreign key
// that holds only when the id is set.
func nullID(d Dialect, id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return d.ID(id)
}

// nullTime stores nil as NULL.
func nullTime(d Dialect, t *time.Time) any {
	if t == nil {
		return nil
	}
	return d.Time(*t)
}

func nullAmount(v *int64) any {
	if v == nil {
		return nil
	}
	return *v
}

func nullDate(d *payment.Date) any {
	if d == nil {
		return nil
	}
	return d.String()
}

// instant scans a time column: Unix microseconds (SQLite's INTEGER) or a
// timestamp (PostgreSQL's timestamptz), read back in UTC; NULL is not
// valid.
type instant struct {
	t     time.Time
	valid bool
}

func (i *instant) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		i.t, i.valid = time.UnixMicro(v).UTC(), true
	case time.Time:
		i.t, i.valid = v.UTC(), true
	case nil:
		*i = instant{}
	default:
		return fmt.Errorf("a time stored as %T", src)
	}
	return nil
}

func (i *instant) ptr() *time.Time {
	if !i.valid {
		return nil
	}
	return &i.t
}

// day scans a calendar day column: YYYY-MM-DD text (SQLite) or a date
// (PostgreSQL), kept as its text for idColumns.date to check; NULL is not
// valid.
type day struct {
	s     string
	valid bool
}

func (d *day) Scan(src any) error {
	switch v := src.(type) {
	case string:
		d.s, d.valid = v, true
	case []byte:
		d.s, d.valid = string(v), true
	case time.Time:
		d.s, d.valid = v.Format(time.DateOnly), true
	case nil:
		*d = day{}
	default:
		return fmt.Errorf("a day stored as %T", src)
	}
	return nil
}

func marshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func metadataJSON(m payment.Metadata) (string, error) {
	if m == nil {
		return "{}", nil
	}
	return marshal(m)
}

// parseMetadata keeps numbers as json.Number so that big integers survive
// the round trip.
func parseMetadata(s string) (payment.Metadata, error) {
	if s == "{}" {
		// What metadataJSON writes for none: most rows, read without a
		// decoder (eleven allocations of a charge's read).
		return payment.Metadata{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m payment.Metadata
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// unmarshalUnlessEmpty decodes a JSON object column into v, which is left
// as it is when the column holds {} (what a zero struct with omitempty
// fields marshals to): most rows, read without reflection.
func unmarshalUnlessEmpty(s string, v any) error {
	if s == "{}" {
		return nil
	}
	return json.Unmarshal([]byte(s), v)
}

func errorJSON(e *payment.PaymentError) (any, error) {
	if e == nil {
		return nil, nil
	}
	return marshal(e)
}

func parseError(s sql.NullString) (*payment.PaymentError, error) {
	if !s.Valid {
		return nil, nil
	}
	var e payment.PaymentError
	return &e, json.Unmarshal([]byte(s.String), &e)
}

// errorCode is kept in a column of its own so that the duplicate-charge
// rule can tell rejected duplicates from charges that were processed.
func errorCode(e *payment.PaymentError) any {
	if e == nil {
		return nil
	}
	return int64(e.Code)
}

func amountPtr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}
