package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
)

// integrityFixture is a database with one merchant, user, store and app
// token, and one charge row with its refund and cancel, written with raw SQL
// (foreign keys off) so that a test can then corrupt any column.
type integrityFixture struct {
	path                   string
	db                     *sqlite.DB
	merchant, store, token uuid.UUID
	charge, refund, cancel uuid.UUID
}

const integrityEmail = "integrity@kessai.test"

func newIntegrityFixture(t *testing.T) *integrityFixture {
	t.Helper()
	ctx := t.Context()
	f := &integrityFixture{path: filepath.Join(t.TempDir(), sqlite.FileName)}
	f.db = open(t, f.path)
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	m := &payment.Merchant{ID: payment.NewID(), Name: "M", Email: "m@kessai.test", CreatedOn: now}
	st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "S", Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	u := &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: integrityEmail, PasswordHash: []byte("h"), CreatedOn: now}
	tok := &payment.AppToken{ID: payment.NewID(), MerchantID: m.ID, StoreID: st.ID, CreatorID: payment.NewID(),
		Mode: payment.ModeTest, Domains: []string{"shop.example"}, SecretHash: []byte("h"), JWT: "a.b.c", CreatedOn: now}
	err := f.db.Update(ctx, func(tx payment.Tx) error {
		return errors.Join(tx.CreateMerchant(ctx, m), tx.CreateStore(ctx, st), tx.CreateUser(ctx, u), tx.CreateAppToken(ctx, tok))
	})
	if err != nil {
		t.Fatal(err)
	}
	f.merchant, f.store, f.token = m.ID, st.ID, tok.ID
	f.charge, f.refund, f.cancel = payment.NewID(), payment.NewID(), payment.NewID()
	f.exec(t, `INSERT INTO charges (id, store_id, merchant_id, token_id, token_type, subscription_id, mode,
		requested_amount, currency, capture, capture_state, capture_amount, descriptor, status, metadata, three_ds,
		redirect_endpoint, merchant_transaction_id, ip_address, last_four, email, created_on, updated_on)
		VALUES (?, ?, ?, ?, 'one_time', '', 'test', 1000, 'JPY', 1, 'none', 0, '', 'pending', '{}', '{}', '', '', '', '0000', '', 1, 1)`,
		f.charge.String(), st.ID.String(), m.ID.String(), payment.NewID().String())
	f.exec(t, `INSERT INTO refunds (id, store_id, merchant_id, charge_id, mode, status, amount, currency, reason, message,
		metadata, created_on, updated_on) VALUES (?, ?, ?, ?, 'test', 'pending', 100, 'JPY', '', '', '{}', 1, 1)`,
		f.refund.String(), st.ID.String(), m.ID.String(), f.charge.String())
	f.exec(t, `INSERT INTO cancels (id, store_id, merchant_id, charge_id, mode, status, metadata, created_on, updated_on)
		VALUES (?, ?, ?, ?, 'test', 'pending', '{}', 1, 1)`,
		f.cancel.String(), st.ID.String(), m.ID.String(), f.charge.String())
	return f
}

// exec writes with a connection of its own, where SQLite's foreign keys are
// off, as a damaged file or a careless hand would.
func (f *integrityFixture) exec(t *testing.T, query string, args ...any) {
	t.Helper()
	if _, err := raw(t, f.path).ExecContext(t.Context(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// TestCorruptIDIsAnError: an id column holding something that is not a UUID
// fails the read, naming the table and column, instead of reading as
// uuid.Nil ("absent"). The empty string still means absent.
func TestCorruptIDIsAnError(t *testing.T) {
	type read func(ctx context.Context, f *integrityFixture, tx payment.Tx) error
	byID := func(get func(ctx context.Context, tx payment.Tx, id uuid.UUID) error, id func(f *integrityFixture) uuid.UUID) read {
		return func(ctx context.Context, f *integrityFixture, tx payment.Tx) error { return get(ctx, tx, id(f)) }
	}
	store := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error { _, err := tx.Store(ctx, id); return err }
	appToken := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error {
		_, err := tx.AppToken(ctx, id)
		return err
	}
	charge := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error { _, err := tx.Charge(ctx, id); return err }
	refund := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error { _, err := tx.Refund(ctx, id); return err }
	cancel := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error { _, err := tx.Cancel(ctx, id); return err }
	user := func(ctx context.Context, _ *integrityFixture, tx payment.Tx) error {
		_, err := tx.UserByEmail(ctx, integrityEmail)
		return err
	}
	appTokens := func(ctx context.Context, f *integrityFixture, tx payment.Tx) error {
		_, err := tx.ListAppTokens(ctx, payment.AppTokenFilter{MerchantID: f.merchant, StoreID: f.store}, payment.ListParams{Limit: 10})
		return err
	}
	storeID := func(f *integrityFixture) uuid.UUID { return f.store }
	tokenID := func(f *integrityFixture) uuid.UUID { return f.token }
	chargeID := func(f *integrityFixture) uuid.UUID { return f.charge }
	refundID := func(f *integrityFixture) uuid.UUID { return f.refund }
	cancelID := func(f *integrityFixture) uuid.UUID { return f.cancel }

	cases := []struct {
		name, table, column, where string
		read                       read
	}{
		{"store's merchant", "stores", "merchant_id", "", byID(store, storeID)},
		{"user's merchant", "users", "merchant_id", "", user},
		{"app token's store", "app_tokens", "store_id", "", byID(appToken, tokenID)},
		{"app token's creator", "app_tokens", "creator_id", "", byID(appToken, tokenID)},
		{"app token's id in a list", "app_tokens", "id", "", appTokens},
		{"charge's token", "charges", "token_id", "", byID(charge, chargeID)},
		{"charge's subscription", "charges", "subscription_id", "", byID(charge, chargeID)},
		{"charge's merchant", "charges", "merchant_id", "", byID(charge, chargeID)},
		{"refund's charge", "refunds", "charge_id", "", byID(refund, refundID)},
		{"cancel's store", "cancels", "store_id", "", byID(cancel, cancelID)},
	}
	for _, tc := range cases {
		for _, corrupt := range []string{"not-a-uuid", "{" + payment.NewID().String() + "}", "00000000-0000-0000-0000-00000000000g"} {
			t.Run(tc.name+"/"+corrupt, func(t *testing.T) {
				f := newIntegrityFixture(t)
				f.exec(t, `UPDATE `+tc.table+` SET `+tc.column+` = ?`, corrupt)
				err := f.db.View(t.Context(), func(tx payment.Tx) error { return tc.read(t.Context(), f, tx) })
				if err == nil {
					t.Fatalf("%s.%s = %q read without an error", tc.table, tc.column, corrupt)
				}
				if payment.IsNotFound(err) {
					t.Fatalf("%s.%s = %q read as NOT_FOUND: %v", tc.table, tc.column, corrupt, err)
				}
				if want := tc.table + "." + tc.column; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			})
		}
	}

	// The empty string is how an absent id is stored, and still reads as one.
	f := newIntegrityFixture(t)
	f.exec(t, `UPDATE app_tokens SET store_id = '', creator_id = ''`)
	err := f.db.View(t.Context(), func(tx payment.Tx) error {
		a, err := tx.AppToken(t.Context(), f.token)
		if err == nil && (a.StoreID != uuid.Nil || a.CreatorID != uuid.Nil) {
			t.Errorf("empty ids read as %v, %v", a.StoreID, a.CreatorID)
		}
		return err
	})
	if err != nil {
		t.Fatalf("an empty id is absent, not an error: %v", err)
	}
}

// TestCorruptWorkIDIsAnError: a work row whose object id is not a UUID
// fails the claim that reads it, naming the column, rather than handing the
// worker uuid.Nil to act on.
func TestCorruptWorkIDIsAnError(t *testing.T) {
	for name, corrupt := range map[string]string{"not-a-uuid": "not-a-uuid", "braces": "{" + payment.NewID().String() + "}", "empty": ""} {
		t.Run(name, func(t *testing.T) {
			f := newIntegrityFixture(t)
			f.exec(t, `INSERT INTO work (kind, object_id, due_at) VALUES ('refund', ?, 0)`, corrupt)
			err := f.db.Update(t.Context(), func(tx payment.Tx) error {
				_, err := tx.ClaimWork(t.Context(), "w", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2030, 1, 1, 0, 1, 0, 0, time.UTC), 10)
				return err
			})
			if err == nil {
				t.Fatalf("work.object_id = %q claimed without an error", corrupt)
			}
			if !strings.Contains(err.Error(), "work.object_id") {
				t.Errorf("error %q does not name work.object_id", err)
			}
		})
	}
}

// TestPanicInUpdateRollsBack: a function that panics inside Update must not
// leave the transaction open, or the one write connection would be stuck
// and every later write would wait for ever.
func TestPanicInUpdateRollsBack(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), sqlite.FileName))
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	lost := &payment.Merchant{ID: payment.NewID(), Name: "lost", Email: "lost@kessai.test", CreatedOn: now}
	func() {
		defer func() {
			if v := recover(); v != "boom" {
				t.Errorf("recovered %v, want the fn's own panic", v)
			}
		}()
		_ = db.Update(t.Context(), func(tx payment.Tx) error {
			if err := tx.CreateMerchant(t.Context(), lost); err != nil {
				return err
			}
			panic("boom")
		})
	}()

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	kept := &payment.Merchant{ID: payment.NewID(), Name: "kept", Email: "kept@kessai.test", CreatedOn: now}
	if err := db.Update(ctx, func(tx payment.Tx) error { return tx.CreateMerchant(ctx, kept) }); err != nil {
		t.Fatalf("the next Update after a panic: %v", err)
	}
	err := db.View(ctx, func(tx payment.Tx) error {
		if _, err := tx.Merchant(ctx, kept.ID); err != nil {
			return err
		}
		if _, err := tx.Merchant(ctx, lost.ID); !payment.IsNotFound(err) {
			t.Errorf("the panicking transaction's write: %v, want it rolled back (NOT_FOUND)", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
