package sqlite_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/sqlite/sqlitetest"
)

// integrityFixture is a database with one merchant, user, store and app
// token, and one charge row with its refund and cancel, and a subscription
// with the scheduled payment the charge pays, written with raw SQL (foreign
// keys off) so that a test can then corrupt any column.
type integrityFixture struct {
	path                   string
	db                     *sqlite.DB
	merchant, store, token uuid.UUID
	charge, refund, cancel uuid.UUID
	subscription, payment  uuid.UUID
}

const integrityEmail = "integrity@kessai.test"

// integrityTemplate is the fixture's database, built once per test binary
// (by the first test that asks) and copied for each: building it costs ten
// times as much, and the corruption tests take a fresh one for each case.
var integrityTemplate struct {
	once  sync.Once
	ids   integrityFixture // path and db empty
	files map[string][]byte
}

func newIntegrityFixture(t *testing.T) *integrityFixture {
	t.Helper()
	integrityTemplate.once.Do(func() {
		b := buildIntegrityFixture(t)
		// The raw connections stay open until the test ends: what the
		// WAL holds is copied with the file.
		if err := b.db.Close(); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		for _, suffix := range []string{"", "-wal"} {
			data, err := os.ReadFile(b.path + suffix)
			if errors.Is(err, fs.ErrNotExist) && suffix != "" {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			files[suffix] = data
		}
		integrityTemplate.ids = *b
		integrityTemplate.ids.path, integrityTemplate.ids.db = "", nil
		integrityTemplate.files = files
	})
	if integrityTemplate.files == nil {
		t.Fatal("the integrity fixture could not be built: see the first test that asked for it")
	}
	f := integrityTemplate.ids
	f.path = filepath.Join(t.TempDir(), sqlite.FileName)
	for suffix, data := range integrityTemplate.files {
		if err := os.WriteFile(f.path+suffix, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f.db = open(t, f.path)
	return &f
}

func buildIntegrityFixture(t *testing.T) *integrityFixture {
	t.Helper()
	ctx := t.Context()
	f := &integrityFixture{path: sqlitetest.Path(t)}
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
	f.subscription, f.payment = payment.NewID(), payment.NewID()
	f.exec(t, `INSERT INTO subscriptions (id, store_id, merchant_id, token_id, mode, amount, currency, period,
		cyclical_period, start_on, zone_id, preserve_end_of_month, retry_interval, termination_mode, anchor,
		plan_fixed_cycles, plan_fixed_cycle_amount, status, next_payment_id, payments_made, amount_paid, three_ds,
		descriptor, only_direct_currency, first_charge_authorization_only, first_charge_capture_after, metadata,
		from_browser, email, last_four, created_on, updated_on)
		VALUES (?, ?, ?, ?, 'test', 1000, 'JPY', 'monthly', '', '2026-03-02', 'Asia/Tokyo', 0, '', 'immediate', '2026-03-02',
			0, 0, 'current', ?, 0, 0, '{}', '', 0, 0, '', '{}', 0, '', '', 1, 1)`,
		f.subscription.String(), st.ID.String(), m.ID.String(), payment.NewID().String(), f.payment.String())
	f.exec(t, `INSERT INTO scheduled_payments (id, subscription_id, store_id, merchant_id, mode, cycle, due_date, zone_id,
		amount, currency, is_paid, is_last_payment, successful_payment_date, retry_date, retry_interval,
		terminate_with_status, attempts, charge_id, created_on, updated_on)
		VALUES (?, ?, ?, ?, 'test', 0, '2026-03-02', 'Asia/Tokyo', 1000, 'JPY', 1, 0, '2026-03-02', '2026-03-03', '', '', 1, ?, 1, 1)`,
		f.payment.String(), f.subscription.String(), st.ID.String(), m.ID.String(), f.charge.String())
	f.exec(t, `UPDATE charges SET subscription_id = ?, payment_id = ?`, f.subscription.String(), f.payment.String())
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
	refund := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error {
		_, err := tx.QueuedRefund(ctx, id)
		return err
	}
	cancel := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error {
		_, err := tx.QueuedCancel(ctx, id)
		return err
	}
	subscription := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error {
		_, err := tx.Subscription(ctx, id)
		return err
	}
	scheduled := func(ctx context.Context, tx payment.Tx, id uuid.UUID) error {
		_, err := tx.ScheduledPayment(ctx, id)
		return err
	}
	subscriptions := func(ctx context.Context, f *integrityFixture, tx payment.Tx) error {
		_, err := tx.ListSubscriptions(ctx, payment.SubscriptionFilter{MerchantID: f.merchant}, payment.ListParams{Limit: 10})
		return err
	}
	payments := func(ctx context.Context, f *integrityFixture, tx payment.Tx) error {
		_, err := tx.ListScheduledPayments(ctx, f.subscription, payment.ListParams{Limit: 10})
		return err
	}
	charges := func(ctx context.Context, f *integrityFixture, tx payment.Tx) error {
		_, err := tx.ListCharges(ctx, payment.ChargeFilter{MerchantID: f.merchant}, payment.ListParams{Limit: 10})
		return err
	}
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
	subscriptionID := func(f *integrityFixture) uuid.UUID { return f.subscription }
	paymentID := func(f *integrityFixture) uuid.UUID { return f.payment }

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
		{"charge's payment", "charges", "payment_id", "", byID(charge, chargeID)},
		{"charge's payment in a list", "charges", "payment_id", "", charges},
		{"subscription's token", "subscriptions", "token_id", "", byID(subscription, subscriptionID)},
		{"subscription's store", "subscriptions", "store_id", "", byID(subscription, subscriptionID)},
		{"subscription's next payment", "subscriptions", "next_payment_id", "", byID(subscription, subscriptionID)},
		{"subscription's id in a list", "subscriptions", "id", "", subscriptions},
		{"payment's subscription", "scheduled_payments", "subscription_id", "", byID(scheduled, paymentID)},
		{"payment's charge", "scheduled_payments", "charge_id", "", byID(scheduled, paymentID)},
		{"payment's id in a list", "scheduled_payments", "id", "", payments},
	}
	for _, tc := range cases {
		for _, corrupt := range []string{"not-a-uuid", "{" + payment.NewID().String() + "}", "00000000-0000-0000-0000-00000000000g",
			strings.ToUpper(payment.NewID().String())} {
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
	db := open(t, sqlitetest.Path(t))
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

// TestCorruptDateIsAnError: a day column holding something that is not a
// YYYY-MM-DD day fails the read, naming the table and column, instead of
// reading as the zero Date; a nullable one read as NULL is nil. An empty
// charges.payment_id is corrupt too: no payment is NULL there.
func TestCorruptDateIsAnError(t *testing.T) {
	subscription := func(f *integrityFixture, tx payment.Tx) error {
		_, err := tx.Subscription(t.Context(), f.subscription)
		return err
	}
	scheduled := func(f *integrityFixture, tx payment.Tx) error {
		_, err := tx.ScheduledPayment(t.Context(), f.payment)
		return err
	}
	charge := func(f *integrityFixture, tx payment.Tx) error {
		_, err := tx.Charge(t.Context(), f.charge)
		return err
	}
	cases := []struct {
		table, column string
		read          func(f *integrityFixture, tx payment.Tx) error
		corrupt       []string
	}{
		{"subscriptions", "anchor", subscription, []string{"", "2026-02-30", "20260302", "2026-3-2", "0000-01-01", "not a day"}},
		{"subscriptions", "start_on", subscription, []string{"", "2026-13-01", "2026-03-02T00:00:00Z"}},
		{"scheduled_payments", "due_date", scheduled, []string{"", "2026-02-29", "+2026-03-02"}},
		{"scheduled_payments", "successful_payment_date", scheduled, []string{"", "yesterday"}},
		{"scheduled_payments", "retry_date", scheduled, []string{"", "2026-03-32"}},
		{"charges", "payment_id", charge, []string{""}},
	}
	for _, tc := range cases {
		for _, corrupt := range tc.corrupt {
			t.Run(tc.table+"."+tc.column+"/"+corrupt, func(t *testing.T) {
				f := newIntegrityFixture(t)
				f.exec(t, `UPDATE `+tc.table+` SET `+tc.column+` = ?`, corrupt)
				err := f.db.View(t.Context(), func(tx payment.Tx) error { return tc.read(f, tx) })
				if err == nil {
					t.Fatalf("%s.%s = %q read without an error", tc.table, tc.column, corrupt)
				}
				if want := tc.table + "." + tc.column; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			})
		}
	}

	// As written, the fixture reads; NULL days are nil.
	f := newIntegrityFixture(t)
	err := f.db.View(t.Context(), func(tx payment.Tx) error {
		p, err := tx.ScheduledPayment(t.Context(), f.payment)
		if err != nil {
			return err
		}
		if p.DueDate != (payment.Date{Year: 2026, Month: time.March, Day: 2}) || p.RetryDate == nil || p.RetryDate.Day != 3 {
			t.Errorf("the fixture's payment reads %+v", p)
		}
		ch, err := tx.Charge(t.Context(), f.charge)
		if err == nil && (ch.PaymentID != f.payment || ch.SubscriptionID != f.subscription) {
			t.Errorf("the fixture's charge pays %s of %s, want %s of %s", ch.PaymentID, ch.SubscriptionID, f.payment, f.subscription)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f.exec(t, `UPDATE scheduled_payments SET successful_payment_date = NULL, retry_date = NULL`)
	f.exec(t, `UPDATE subscriptions SET start_on = NULL`)
	err = f.db.View(t.Context(), func(tx payment.Tx) error {
		p, err := tx.ScheduledPayment(t.Context(), f.payment)
		if err == nil && (p.SuccessfulPaymentDate != nil || p.RetryDate != nil) {
			t.Errorf("NULL days read as %v, %v", p.SuccessfulPaymentDate, p.RetryDate)
		}
		if err != nil {
			return err
		}
		sub, err := tx.Subscription(t.Context(), f.subscription)
		if err == nil && sub.Schedule.StartOn != nil {
			t.Errorf("a NULL start_on read as %v", sub.Schedule.StartOn)
		}
		return err
	})
	if err != nil {
		t.Fatalf("NULL days are absent, not an error: %v", err)
	}
}

// TestSubscriptionReferences: the foreign keys of migration 0011. A
// subscription's token and store, a scheduled payment's subscription and a
// charge's payment (when it has one) must exist; uuid.Nil, no payment, is
// stored as NULL and needs none.
func TestSubscriptionReferences(t *testing.T) {
	ctx := t.Context()
	db := open(t, sqlitetest.Path(t))
	now := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	m := &payment.Merchant{ID: payment.NewID(), Name: "M", Email: "m@kessai.test", CreatedOn: now}
	st := &payment.Store{ID: payment.NewID(), MerchantID: m.ID, Name: "S", Settings: payment.DefaultStoreSettings(), CreatedOn: now}
	tok := &payment.TransactionToken{ID: payment.NewID(), StoreID: st.ID, MerchantID: m.ID, Mode: payment.ModeTest,
		Type: payment.SubscriptionToken, CreatedOn: now, UpdatedOn: now}
	sub := func(change func(*payment.Subscription)) *payment.Subscription {
		s := &payment.Subscription{ID: payment.NewID(), StoreID: st.ID, MerchantID: m.ID, TokenID: tok.ID, Mode: payment.ModeTest,
			Amount: 1000, Currency: "JPY", Period: "monthly", Anchor: payment.Date{Year: 2026, Month: time.March, Day: 2},
			Status: payment.SubscriptionCurrent, CreatedOn: now, UpdatedOn: now}
		change(s)
		return s
	}
	pay := func(subID uuid.UUID) *payment.ScheduledPayment {
		return &payment.ScheduledPayment{ID: payment.NewID(), SubscriptionID: subID, StoreID: st.ID, MerchantID: m.ID,
			Mode: payment.ModeTest, DueDate: payment.Date{Year: 2026, Month: time.March, Day: 2}, Amount: 1000, Currency: "JPY",
			CreatedOn: now, UpdatedOn: now}
	}
	charge := func(payID uuid.UUID) *payment.Charge {
		return &payment.Charge{ID: payment.NewID(), StoreID: st.ID, MerchantID: m.ID, TokenID: tok.ID, PaymentID: payID,
			Mode: payment.ModeTest, RequestedAmount: 1000, Currency: "JPY", Status: payment.ChargePending, CreatedOn: now, UpdatedOn: now}
	}
	good := sub(func(*payment.Subscription) {})
	goodPay := pay(good.ID)
	goodCharge := charge(uuid.Nil)
	err := db.Update(ctx, func(tx payment.Tx) error {
		return errors.Join(tx.CreateMerchant(ctx, m), tx.CreateStore(ctx, st), tx.CreateToken(ctx, tok),
			tx.CreateSubscription(ctx, good), tx.CreateScheduledPayment(ctx, goodPay), tx.CreateCharge(ctx, goodCharge),
			tx.CreateCharge(ctx, charge(goodPay.ID)))
	})
	if err != nil {
		t.Fatalf("rows whose references exist: %v", err)
	}
	refused := map[string]func(tx payment.Tx) error{
		"subscription's token": func(tx payment.Tx) error {
			return tx.CreateSubscription(ctx, sub(func(s *payment.Subscription) { s.TokenID = payment.NewID() }))
		},
		"subscription's store": func(tx payment.Tx) error {
			return tx.CreateSubscription(ctx, sub(func(s *payment.Subscription) { s.StoreID = payment.NewID() }))
		},
		"subscription's token changed": func(tx payment.Tx) error {
			changed := *good
			changed.TokenID = payment.NewID()
			return tx.UpdateSubscription(ctx, &changed)
		},
		"payment's subscription": func(tx payment.Tx) error { return tx.CreateScheduledPayment(ctx, pay(payment.NewID())) },
		"charge's payment":       func(tx payment.Tx) error { return tx.CreateCharge(ctx, charge(payment.NewID())) },
		"charge's payment changed": func(tx payment.Tx) error {
			changed := *goodCharge
			changed.PaymentID = payment.NewID()
			return tx.UpdateCharge(ctx, &changed)
		},
	}
	for name, write := range refused {
		t.Run(name, func(t *testing.T) {
			if err := db.Update(ctx, write); err == nil {
				t.Fatal("a reference to nothing was stored")
			}
		})
	}
}
