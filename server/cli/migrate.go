package cli

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/postgres"
	"github.com/kessai/kessai/server/sqlite"
)

// Migrate is `kessai migrate --to URL`: it copies the embedded store
// of the data directory, every row of every table as of one snapshot, into
// an empty PostgreSQL schema in one transaction, then checks the copy.
//
// The copy is driven by PostgreSQL's schema: each of its tables is read
// from SQLite's table of the same name, column by column, and each value
// converted from SQLite's representation by the PostgreSQL column's type
// (convert). A table or column that one side has and the other lacks
// stops the copy before anything is written, so nothing is left behind
// silently. Sealed card data and webhook secrets are bytes like any other,
// copied as they are: they stay sealed under the same card key.
func Migrate(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := gateway.LoadConfig(nil)
	if err != nil {
		return err
	}
	fset := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fset.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory of the embedded store to copy (KESSAI_DATA_DIR)")
	to := fset.String("to", cfg.DatabaseURL, "the PostgreSQL database to copy into (KESSAI_DATABASE_URL)")
	if err := fset.Parse(args); err != nil {
		return err
	}
	if *to == "" {
		return errors.New("migrate: --to (or KESSAI_DATABASE_URL) must name the PostgreSQL database to copy into")
	}
	if u, err := url.Parse(*to); err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// The URL itself is never repeated: it may hold a password.
		return errors.New("migrate: --to must be a postgres:// or postgresql:// URL")
	}
	path := filepath.Join(cfg.DataDir, sqlite.FileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("migrate: no embedded store in %s (no %s)", cfg.DataDir, sqlite.FileName)
	}
	lock, err := sqlite.LockDir(cfg.DataDir)
	if errors.Is(err, sqlite.ErrLocked) {
		return fmt.Errorf("migrate: a gateway is running on the embedded store in %s (it holds %s): stop it first, "+
			"or the charges it takes after the copy would be lost", cfg.DataDir, sqlite.LockFileName)
	}
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer lock.Close()
	src, err := sqlite.Open(ctx, path)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer src.Close()
	// The keys the gateway would use on this store are the ones the
	// copy's processes must use: checked, and recorded if the store
	// predates the record, so that the copy carries them.
	if err := gateway.CheckStoreKeys(ctx, cfg, src); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	dst, err := postgres.Open(ctx, *to)
	if err != nil {
		return fmt.Errorf("migrate: opening %s: %w", redactedURL(*to), err)
	}
	defer dst.Close()

	copied, objects, err := copyStore(ctx, src, dst)
	if err != nil {
		return fmt.Errorf("migrate: %w (nothing was written to PostgreSQL)", err)
	}
	if err := verifyCopy(ctx, src, dst, copied, objects); err != nil {
		return fmt.Errorf("migrate: the copy was written but does not match: %w", err)
	}

	tw := tabwriter.NewWriter(out, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "table\trows\t")
	var total int64
	for _, c := range copied {
		fmt.Fprintf(tw, "%s\t%d\t\n", c.table, c.rows)
		total += c.rows
	}
	tw.Flush()
	fmt.Fprintf(out, `
Copied %[3]d rows in %[4]d tables from the embedded store in
  %[1]s
into
  %[2]s
and checked the copy: row counts, and every object read back through both engines.

Next:
  - Run the gateway with KESSAI_DATABASE_URL set to that database.
  - Keep the same keys: every process on the database needs this store's signing
    key and card key, as KESSAI_SIGNING_KEY and KESSAI_CARD_KEY (and
    KESSAI_RETIRED_CARD_KEYS), or copies of the data directory's server.key and
    card.key in its own. A process with other keys refuses to start.
  - Keep the data directory until the gateway on PostgreSQL answers, and do not
    start a gateway on the embedded store again: what it took, PostgreSQL would
    never see.
`, cfg.DataDir, redactedURL(*to), total, len(copied))
	return nil
}

// redactedURL is a database URL fit to print: without its password.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the PostgreSQL database"
	}
	return u.Redacted()
}

// tableCount is how many rows a table holds.
type tableCount struct {
	table string
	rows  int64
}

// reset holds the columns whose values are not copied but set: a work
// item's claim belonged to a process of the old store, whose lease would
// hold the item from the new processes until it ran out.
var reset = map[string]map[string]any{
	"work": {"claimed_by": "", "lease_until": nil},
}

// copyStore copies every table of src's snapshot into dst, all in one
// transaction, and returns the rows per table and the keys of the objects
// verifyCopy reads back.
func copyStore(ctx context.Context, src *sqlite.DB, dst *postgres.DB) ([]tableCount, map[string][]objectKey, error) {
	snap, err := src.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer snap.Close()
	var copied []tableCount
	objects := map[string][]objectKey{}
	err = dst.Restore(ctx, func(r *postgres.Restorer) error {
		copied, objects = nil, map[string][]objectKey{}
		have := map[string]bool{"schema_migrations": true}
		for _, t := range r.Tables() {
			have[t.Name] = true
		}
		for name := range snap.Tables() {
			if !have[name] {
				return fmt.Errorf("the embedded store's table %s has no place in PostgreSQL's schema", name)
			}
		}
		for _, t := range r.Tables() {
			srcColumns, ok := snap.Tables()[t.Name]
			if !ok {
				return fmt.Errorf("PostgreSQL's table %s is not in the embedded store", t.Name)
			}
			rs := &rowSource{table: t.Name, objects: objects}
			for _, c := range t.Columns {
				if !slices.Contains(srcColumns, c.Name) {
					if c.Identity {
						continue // numbered by PostgreSQL, in the order of the rows
					}
					return fmt.Errorf("column %s.%s is not in the embedded store", t.Name, c.Name)
				}
				rs.columns = append(rs.columns, c)
			}
			for _, name := range srcColumns {
				if !slices.ContainsFunc(rs.columns, func(c postgres.Column) bool { return c.Name == name }) {
					return fmt.Errorf("the embedded store's column %s.%s has no place in PostgreSQL's schema", t.Name, name)
				}
			}
			names := make([]string, len(rs.columns))
			for i, c := range rs.columns {
				names[i] = c.Name
			}
			rows, err := snap.Rows(ctx, t.Name, names)
			if err != nil {
				return err
			}
			rs.rows = rows
			n, err := r.Copy(ctx, t.Name, names, rs)
			rows.Close()
			if err != nil {
				return err
			}
			copied = append(copied, tableCount{t.Name, n})
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	// The counts the snapshot saw, for verifyCopy.
	for i, c := range copied {
		n, err := snap.Count(ctx, c.table)
		if err != nil {
			return nil, nil, err
		}
		if n != c.rows {
			return nil, nil, fmt.Errorf("%s: %d rows copied of %d", c.table, c.rows, n)
		}
		copied[i].rows = n
	}
	return copied, objects, nil
}

// rowSource feeds one table's rows from the snapshot to PostgreSQL's COPY,
// converting each value, and notes the keys of the objects it copies.
type rowSource struct {
	table   string
	columns []postgres.Column
	rows    *sql.Rows
	objects map[string][]objectKey
	values  []any
	err     error
}

func (s *rowSource) Next() bool {
	if s.err != nil || !s.rows.Next() {
		return false
	}
	raw := make([]any, len(s.columns))
	ptrs := make([]any, len(raw))
	for i := range raw {
		ptrs[i] = &raw[i]
	}
	if s.err = s.rows.Scan(ptrs...); s.err != nil {
		return false
	}
	s.values = make([]any, len(raw))
	for i, c := range s.columns {
		if v, ok := reset[s.table][c.Name]; ok {
			s.values[i] = v
			continue
		}
		if s.values[i], s.err = convert(c, raw[i]); s.err != nil {
			s.err = fmt.Errorf("%s.%s: %w", s.table, c.Name, s.err)
			return false
		}
	}
	if k, ok := keyOf(s.table, s.columns, raw); ok {
		s.objects[s.table] = append(s.objects[s.table], k)
	}
	return true
}

func (s *rowSource) Values() ([]any, error) { return s.values, s.err }

func (s *rowSource) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.rows.Err()
}

// convert turns a value as SQLite holds it into one for a PostgreSQL
// column of c's type. SQLite stores ids as text (empty for an absent id),
// booleans as 0 or 1, times as Unix microseconds and calendar days as
// YYYY-MM-DD text.
func convert(c postgres.Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch c.Type {
	case "uuid":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("an id stored as %T", v)
		}
		if s == "" {
			// An absent id: the nil UUID, or NULL where a foreign key
			// holds only when the id is set (postgres' package comment).
			if c.Nullable {
				return nil, nil
			}
			return pgtype.UUID{Valid: true}, nil
		}
		id, err := uuid.Parse(s)
		if err != nil {
			return nil, fmt.Errorf("an id that is not a UUID: %w", err)
		}
		return pgtype.UUID{Bytes: id, Valid: true}, nil
	case "boolean":
		n, ok := v.(int64)
		if !ok || (n != 0 && n != 1) {
			return nil, fmt.Errorf("a boolean stored as %T %v", v, v)
		}
		return n == 1, nil
	case "timestamp with time zone":
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("a time stored as %T", v)
		}
		return time.UnixMicro(n).UTC(), nil
	case "date":
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("a day stored as %T", v)
		}
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return nil, err
		}
		return pgtype.Date{Time: d, Valid: true}, nil
	case "bigint", "integer":
		n, ok := v.(int64)
		if !ok {
			return nil, fmt.Errorf("a number stored as %T", v)
		}
		return n, nil
	case "text":
		switch s := v.(type) {
		case string:
			return s, nil
		case []byte:
			return string(s), nil
		}
		return nil, fmt.Errorf("text stored as %T", v)
	case "bytea":
		switch b := v.(type) {
		case []byte:
			if b == nil && !c.Nullable {
				// The SQLite driver reads an empty BLOB as a nil slice,
				// which PostgreSQL would take for NULL: the card number
				// of a token without a card (a wallet's, a konbini's).
				return []byte{}, nil
			}
			return b, nil
		case string:
			return []byte(b), nil
		}
		return nil, fmt.Errorf("bytes stored as %T", v)
	}
	return nil, fmt.Errorf("no conversion into PostgreSQL's %s", c.Type)
}

// objectKey names one object that verifyCopy reads back: its id (an
// approval's key, a console session's or reset's token hash in hex), and
// for a work item its kind.
type objectKey struct{ id, kind string }

// keyOf returns the key of the object a row of table holds, for the
// tables whose objects payment.Tx reads one by one.
func keyOf(table string, columns []postgres.Column, raw []any) (objectKey, bool) {
	if _, ok := readers[table]; !ok {
		return objectKey{}, false
	}
	var k objectKey
	for i, c := range columns {
		s, _ := raw[i].(string)
		switch {
		case c.Name == "id" || (table == "approvals" && c.Name == "key") || (table == "work" && c.Name == "object_id"):
			k.id = s
		case c.Name == "token_hash":
			b, _ := raw[i].([]byte)
			k.id = hex.EncodeToString(b)
		case table == "work" && c.Name == "kind":
			k.kind = s
		}
	}
	return k, true
}

// readers read one object of a table through payment.Tx.
var readers = map[string]func(ctx context.Context, tx payment.Tx, k objectKey) (any, error){
	"merchants":          byID(payment.Tx.Merchant),
	"users":              byID(payment.Tx.User),
	"console_sessions":   byHash(payment.Tx.ConsoleSession),
	"password_resets":    byHash(payment.Tx.PasswordReset),
	"stores":             byID(payment.Tx.Store),
	"app_tokens":         byID(payment.Tx.AppToken),
	"tokens":             byID(payment.Tx.Token),
	"charges":            byID(payment.Tx.Charge),
	"refunds":            byID(payment.Tx.QueuedRefund),
	"cancels":            byID(payment.Tx.QueuedCancel),
	"webhooks":           byID(payment.Tx.Webhook),
	"events":             byID(payment.Tx.Event),
	"deliveries":         byID(payment.Tx.Delivery),
	"subscriptions":      byID(payment.Tx.Subscription),
	"scheduled_payments": byID(payment.Tx.ScheduledPayment),
	"approvals": func(ctx context.Context, tx payment.Tx, k objectKey) (any, error) {
		return tx.Approval(ctx, k.id)
	},
	"work": func(ctx context.Context, tx payment.Tx, k objectKey) (any, error) {
		id, err := uuid.Parse(k.id)
		if err != nil {
			return nil, err
		}
		w, err := tx.Work(ctx, payment.WorkKind(k.kind), id)
		if err != nil {
			return nil, err
		}
		// Claims are not copied (reset).
		w.ClaimedBy, w.LeaseUntil = "", time.Time{}
		return w, nil
	},
}

func byID[T any](read func(payment.Tx, context.Context, uuid.UUID) (T, error)) func(context.Context, payment.Tx, objectKey) (any, error) {
	return func(ctx context.Context, tx payment.Tx, k objectKey) (any, error) {
		id, err := uuid.Parse(k.id)
		if err != nil {
			return nil, err
		}
		return read(tx, ctx, id)
	}
}

// byHash reads an object found by the hash of its token.
func byHash[T any](read func(payment.Tx, context.Context, []byte) (T, error)) func(context.Context, payment.Tx, objectKey) (any, error) {
	return func(ctx context.Context, tx payment.Tx, k objectKey) (any, error) {
		hash, err := hex.DecodeString(k.id)
		if err != nil {
			return nil, err
		}
		return read(tx, ctx, hash)
	}
}

// verifyBatch is how many objects verifyCopy reads in one transaction.
const verifyBatch = 500

// verifyCopy checks that dst holds what src does: as many rows in every
// table, and every object payment.Tx reads one by one equal, field by
// field, read from either engine.
func verifyCopy(ctx context.Context, src *sqlite.DB, dst *postgres.DB, copied []tableCount, objects map[string][]objectKey) error {
	for _, c := range copied {
		n, err := dst.Count(ctx, c.table)
		if err != nil {
			return err
		}
		if n != c.rows {
			return fmt.Errorf("%s holds %d rows in PostgreSQL, %d in the embedded store", c.table, n, c.rows)
		}
	}
	for table, keys := range objects {
		read := readers[table]
		for chunk := range slices.Chunk(keys, verifyBatch) {
			readAll := func(db payment.Storage) ([]any, error) {
				got := make([]any, 0, len(chunk))
				err := db.View(ctx, func(tx payment.Tx) error {
					for _, k := range chunk {
						o, err := read(ctx, tx, k)
						if err != nil {
							return fmt.Errorf("%s %s: %w", table, k.id, err)
						}
						got = append(got, o)
					}
					return nil
				})
				return got, err
			}
			want, err := readAll(src)
			if err != nil {
				return fmt.Errorf("the embedded store: %w", err)
			}
			got, err := readAll(dst)
			if err != nil {
				return fmt.Errorf("PostgreSQL: %w", err)
			}
			for i := range want {
				if d := firstDifference(reflect.ValueOf(got[i]), reflect.ValueOf(want[i]), table); d != "" {
					return fmt.Errorf("%s %s differs: %s", table, chunk[i].id, d)
				}
			}
		}
	}
	return nil
}

// firstDifference names the first field in which a and b differ, or
// returns "": times compare as instants, and a nil slice or map is like
// an empty one (engines may give back either).
func firstDifference(a, b reflect.Value, path string) string {
	if a.Type() != b.Type() {
		return path + ": types differ"
	}
	if a.Type() == reflect.TypeFor[time.Time]() {
		if !a.Interface().(time.Time).Equal(b.Interface().(time.Time)) {
			return path
		}
		return ""
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return path
			}
			return ""
		}
		return firstDifference(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if f := a.Type().Field(i); f.IsExported() {
				if d := firstDifference(a.Field(i), b.Field(i), path+"."+f.Name); d != "" {
					return d
				}
			}
		}
		return ""
	case reflect.Slice, reflect.Map:
		if a.Len() == 0 && b.Len() == 0 {
			return ""
		}
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return path
		}
		return ""
	}
	if !a.CanInterface() || !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return path
	}
	return ""
}
