package sqlite

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// TestWorkQueueMigration upgrades a database written before the work queue
// existed, whose waiting operations carried their retry state in columns of
// their own, and checks that every operation that was waiting is queued
// once, with the attempts and next attempt time it had reached, and that
// nothing else is.
func TestWorkQueueMigration(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), FileName)
	old, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	applyMigrationsBefore(t, old, "0007")

	retry := time.Date(2026, 5, 1, 9, 30, 0, 123456000, time.UTC)
	type row struct {
		name  string
		table string
		// status, capture_state (charges only), and the retry columns as
		// the worker left them.
		status, capture                 string
		attempts, retryAt               int64
		captureAttempts, captureRetryAt int64
		want                            []payment.Work // nil: no work
		id                              uuid.UUID
	}
	micro := func(t time.Time) int64 { return t.UnixMicro() }
	rows := []*row{
		{name: "pending charge, never tried", table: "charges", status: "pending",
			want: []payment.Work{{Kind: payment.WorkAuthorize, Due: time.UnixMicro(0).UTC()}}},
		{name: "pending charge, held back", table: "charges", status: "pending", attempts: 3, retryAt: micro(retry),
			want: []payment.Work{{Kind: payment.WorkAuthorize, Attempts: 3, Due: retry}}},
		{name: "capture requested", table: "charges", status: "authorized", capture: "requested",
			attempts: 5, retryAt: micro(retry.Add(time.Hour)), captureAttempts: 2, captureRetryAt: micro(retry.Add(time.Minute)),
			want: []payment.Work{{Kind: payment.WorkCapture, Attempts: 2, Due: retry.Add(time.Minute)}}},
		{name: "authorized, no capture asked", table: "charges", status: "authorized", attempts: 1, retryAt: micro(retry)},
		{name: "awaiting the customer", table: "charges", status: "awaiting"},
		{name: "successful charge", table: "charges", status: "successful", capture: "done", attempts: 2, retryAt: micro(retry)},
		{name: "failed charge", table: "charges", status: "failed"},
		{name: "pending refund", table: "refunds", status: "pending", attempts: 1, retryAt: micro(retry),
			want: []payment.Work{{Kind: payment.WorkRefund, Attempts: 1, Due: retry}}},
		{name: "successful refund", table: "refunds", status: "successful"},
		{name: "pending cancel", table: "cancels", status: "pending",
			want: []payment.Work{{Kind: payment.WorkCancel, Due: time.UnixMicro(0).UTC()}}},
		{name: "failed cancel", table: "cancels", status: "failed", attempts: 4, retryAt: micro(retry)},
	}
	exec := func(query string, args ...any) {
		t.Helper()
		if _, err := old.ExecContext(ctx, query, args...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	// Foreign keys are off on this connection: the parents do not matter.
	parent := payment.NewID().String()
	for _, r := range rows {
		r.id = payment.NewID()
		switch r.table {
		case "charges":
			exec(`INSERT INTO charges (id, store_id, merchant_id, token_id, token_type, subscription_id, mode,
				requested_amount, currency, capture, capture_state, capture_amount, descriptor, status, metadata, three_ds,
				redirect_endpoint, merchant_transaction_id, ip_address, last_four, email, created_on, updated_on,
				work_attempts, retry_at, capture_attempts, capture_retry_at)
				VALUES (?, ?, ?, ?, 'one_time', '', 'test', 1000, 'JPY', 1, ?, 0, '', ?, '{}', '{}', '', '', '', '0000', '', 1, 1,
				?, ?, ?, ?)`,
				r.id.String(), parent, parent, parent, r.capture, r.status, r.attempts, r.retryAt, r.captureAttempts, r.captureRetryAt)
		case "refunds":
			exec(`INSERT INTO refunds (id, store_id, merchant_id, charge_id, mode, status, amount, currency, reason, message,
				metadata, created_on, updated_on, work_attempts, retry_at)
				VALUES (?, ?, ?, ?, 'test', ?, 100, 'JPY', '', '', '{}', 1, 1, ?, ?)`,
				r.id.String(), parent, parent, parent, r.status, r.attempts, r.retryAt)
		case "cancels":
			exec(`INSERT INTO cancels (id, store_id, merchant_id, charge_id, mode, status, metadata, created_on, updated_on,
				work_attempts, retry_at) VALUES (?, ?, ?, ?, 'test', ?, '{}', 1, 1, ?, ?)`,
				r.id.String(), parent, parent, parent, r.status, r.attempts, r.retryAt)
		}
		for i := range r.want {
			r.want[i].ID = r.id
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("upgrading: %v", err)
	}
	defer db.Close()
	queued := 0
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			err := db.View(ctx, func(tx payment.Tx) error {
				for _, kind := range []payment.WorkKind{payment.WorkAuthorize, payment.WorkCapture, payment.WorkRefund, payment.WorkCancel} {
					got, err := tx.Work(ctx, kind, r.id)
					var want *payment.Work
					for _, w := range r.want {
						if w.Kind == kind {
							want = &w
						}
					}
					switch {
					case want == nil && !payment.IsNotFound(err):
						t.Errorf("%s work: %+v, %v; want none", kind, got, err)
					case want != nil && err != nil:
						t.Errorf("%s work: %v; want %+v", kind, err, *want)
					case want != nil && *got != *want:
						t.Errorf("%s work: %+v\nwant %+v", kind, *got, *want)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
		queued += len(r.want)
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT COUNT(*) FROM work`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != queued {
		t.Errorf("the upgrade queued %d items, want %d", n, queued)
	}
}

// applyMigrationsBefore brings an empty database to the schema it had
// before the migration whose name starts with first, as Open would have.
func applyMigrationsBefore(t *testing.T, db *sql.DB, first string) {
	t.Helper()
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	for _, name := range names {
		if filepath.Base(name) >= first {
			break
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(t.Context(), string(body)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE schema_migrations (name TEXT PRIMARY KEY, applied_on INTEGER NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if filepath.Base(name) >= first {
			break
		}
		if _, err := db.ExecContext(t.Context(), `INSERT INTO schema_migrations (name, applied_on) VALUES (?, 1)`, filepath.Base(name)); err != nil {
			t.Fatal(err)
		}
	}
}
