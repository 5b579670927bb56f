package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/postgres"
	"github.com/kessai/kessai/server/postgres/postgrestest"
	"github.com/kessai/kessai/server/sqlite"
)

// seeded is what seedStore made through the API of a gateway on the
// embedded store.
type seeded struct {
	// charges are the answers of GET for each charge, by id.
	charges map[string]map[string]any
}

// seedStore makes, through the API, every kind of object the store keeps:
// a webhook with deliveries (and its events), charges that succeeded,
// failed, were authorized and canceled, await a 3-D Secure approval or are
// to be captured later, a
// refund that succeeded and one that failed, a bank transfer part paid, a
// subscription with its
// payments, and a charge made with an idempotency key; quotas are used
// along the way.
func seedStore(t *testing.T, g *gatewaytest.Gateway) seeded {
	t.Helper()
	c := &gatewaytest.Client{T: t, Base: g.URL, Auth: g.Auth, Store: g.StoreID}
	rcv := newReceiver(t)
	c.Must(http.MethodPost, "/stores/"+g.StoreID+"/webhooks", map[string]any{
		"triggers": []string{"charge_finished", "refund_finished"}, "url": rcv.URL,
	}, nil, http.StatusCreated)

	charged := []string{}
	paid, _ := c.Charge(c.Token("4000020000000000"), true, 1500)
	c.WaitCharge(paid, 30*time.Second, "successful")
	refund, _ := c.Refund(paid, 500)
	c.WaitRefund(paid, refund, 30*time.Second)
	unrefundable, _ := c.Charge(c.Token("4242424242424242"), true, 1200)
	c.WaitCharge(unrefundable, 30*time.Second, "successful")
	failedRefund, _ := c.Refund(unrefundable, 1200)
	c.WaitRefund(unrefundable, failedRefund, 30*time.Second)
	declined, _ := c.Charge(c.Token("4000000000000002"), true, 900)
	c.WaitCharge(declined, 30*time.Second, "failed")
	authorized, _ := c.Charge(c.Token("5555555555554444"), false, 800)
	c.WaitCharge(authorized, 30*time.Second, "authorized")
	c.Must(http.MethodPost, "/stores/"+g.StoreID+"/charges/"+authorized+"/cancels", map[string]any{}, nil, http.StatusCreated)
	c.WaitCharge(authorized, 30*time.Second, "canceled")
	var later struct {
		ID string `json:"id"`
	}
	c.Must(http.MethodPost, "/charges", map[string]any{
		"transaction_token_id": c.Token("3530111333300000"), "amount": 700, "currency": "JPY",
		"capture_at": time.Now().Add(72 * time.Hour).UTC().Format(time.RFC3339),
	}, &later, http.StatusCreated)
	c.WaitCharge(later.ID, 30*time.Second, "authorized")
	// A card its issuer wants authenticated: the charge awaits the
	// shopper's approval.
	challenged, _ := c.Charge(c.Token("4000000000003220"), true, 650)
	kessaitest.WaitFor(t, 30*time.Second, "charge "+challenged+" to await its approval", func() bool {
		var ch struct {
			Status string `json:"status"`
		}
		c.Get("/stores/"+g.StoreID+"/charges/"+challenged, &ch)
		return ch.Status == "awaiting"
	})
	// A bank transfer short of its amount: a virtual account on its
	// token, the charge awaiting more, a line in its ledger.
	var transferTok, transfer struct {
		ID string `json:"id"`
	}
	c.Must(http.MethodPost, "/tokens", map[string]any{
		"payment_type": "bank_transfer", "type": "one_time", "data": map[string]any{"brand": "aozora_bank"},
	}, &transferTok, http.StatusCreated)
	c.Must(http.MethodPost, "/charges", map[string]any{
		"transaction_token_id": transferTok.ID, "amount": 5000, "currency": "JPY",
	}, &transfer, http.StatusCreated)
	c.Must(http.MethodPost, "/stores/"+g.StoreID+"/charges/"+transfer.ID+"/test_helpers/deposit",
		map[string]any{"amount": 2000}, nil, http.StatusOK)
	charged = append(charged, paid, unrefundable, declined, authorized, later.ID, challenged, transfer.ID)

	// A subscription: its first payment's charge, and the next payment
	// queued.
	var subTok, sub struct {
		ID string `json:"id"`
	}
	c.Must(http.MethodPost, "/tokens", map[string]any{
		"payment_type": "card", "type": "subscription", "email": "sub@example.com",
		"data": map[string]any{"cardholder": "TARO YAMADA", "card_number": "4000020000000000",
			"exp_month": 12, "exp_year": time.Now().Year() + 3, "cvv": "123"},
	}, &subTok, http.StatusCreated)
	c.Must(http.MethodPost, "/subscriptions", map[string]any{
		"transaction_token_id": subTok.ID, "amount": 1000, "currency": "JPY", "period": "monthly",
	}, &sub, http.StatusCreated)

	// A charge made with an idempotency key.
	body, _ := json.Marshal(map[string]any{"transaction_token_id": c.Token("4000020000000000"), "amount": 600, "currency": "JPY"})
	req, _ := http.NewRequest(http.MethodPost, g.URL+"/charges", bytes.NewReader(body))
	req.Header.Set("Authorization", g.Auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "migrate-test-1")
	req.Close = true // no idle connection left behind
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var idem struct {
		ID string `json:"id"`
	}
	json.NewDecoder(res.Body).Decode(&idem)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /charges with an idempotency key: %d", res.StatusCode)
	}
	c.WaitCharge(idem.ID, 30*time.Second, "successful")
	charged = append(charged, idem.ID)
	rcv.waitEvent(t, "charge_finished", paid)
	rcv.waitEvent(t, "refund_finished", refund)
	// Gone before the gateway on PostgreSQL starts, which delivers what
	// is left to deliver: into a closed port, leaving no connection open.
	rcv.Close()

	s := seeded{charges: map[string]map[string]any{}}
	c.ListAll("/stores/"+g.StoreID+"/charges", func(raw json.RawMessage) {
		var ch map[string]any
		gatewaytest.MustUnmarshal(t, raw, &ch)
		s.charges[ch["id"].(string)] = nil
	})
	for _, id := range charged {
		s.charges[id] = nil
	}
	for id := range s.charges {
		var ch map[string]any
		c.Get("/stores/"+g.StoreID+"/charges/"+id, &ch)
		s.charges[id] = ch
	}
	return s
}

// seedConsole gives the console user with email a session and two reset
// links, one of them used, as signing in and asking for resets would: the
// console's pages are not what TestMigrate is about.
func seedConsole(t *testing.T, db payment.Storage, email string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	err := db.Update(ctx, func(tx payment.Tx) error {
		u, err := tx.UserByEmail(ctx, email)
		if err != nil {
			return err
		}
		if err := tx.CreateConsoleSession(ctx, &payment.ConsoleSession{TokenHash: []byte("\x00session hash\xff"),
			UserID: u.ID, MerchantID: u.MerchantID, Mode: payment.ModeLive, CreatedOn: now, LastSeenOn: now.Add(time.Minute)}); err != nil {
			return err
		}
		used := now.Add(2 * time.Minute)
		for i, usedOn := range []*time.Time{nil, &used} {
			if err := tx.CreatePasswordReset(ctx, &payment.PasswordReset{TokenHash: []byte{0, byte(i), 0xff},
				UserID: u.ID, CreatedOn: now, ExpiresOn: now.Add(payment.PasswordResetTTL), UsedOn: usedOn}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("seeding the console: %v", err)
	}
}

// claimAll claims every queued item, due or not, for claimant, and returns
// how many it claimed.
func claimAll(t *testing.T, db payment.Storage, claimant string) int {
	t.Helper()
	far := time.Now().Add(100 * 365 * 24 * time.Hour)
	var n int
	err := db.Update(context.Background(), func(tx payment.Tx) error {
		items, err := tx.ClaimWork(context.Background(), claimant, far, far.Add(time.Hour), 1000)
		n = len(items)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestMigrate copies a store seeded through the API into a fresh
// PostgreSQL schema: every table holds as many rows, every object reads
// back the same through payment.Tx from either engine, the old process's
// work claims are gone, and a gateway on PostgreSQL with the same data
// directory's keys answers the same charges to the same app token.
func TestMigrate(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL under -short")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	g := gatewaytest.Start(t, gatewaytest.Options{DataDir: dataDir})
	seed := seedStore(t, g)
	auth := g.Auth
	g.Stop()

	// A worker of the old store held claims when it stopped.
	src, err := sqlite.Open(context.Background(), filepath.Join(dataDir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if n := claimAll(t, src, "old-worker"); n == 0 {
		t.Fatal("the seeded store has no queued work")
	}
	seedConsole(t, src, g.Creds.ConsoleEmail)
	src.Close()

	dbURL := postgrestest.Schema(t)
	var out bytes.Buffer
	if err := Migrate(context.Background(), []string{"--data-dir", dataDir, "--to", dbURL}, &out); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out.String())
	}
	t.Logf("%s", out.String())
	for _, want := range []string{"KESSAI_DATABASE_URL", "KESSAI_SIGNING_KEY", "KESSAI_CARD_KEY", "charges"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary does not mention %s", want)
		}
	}

	src, err = sqlite.Open(context.Background(), filepath.Join(dataDir, sqlite.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	snap, err := src.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var workRows int64
	for table := range snap.Tables() {
		if table == "schema_migrations" {
			continue
		}
		want, err := snap.Count(context.Background(), table)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dst.Count(context.Background(), table)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s: %d rows in PostgreSQL, %d in the embedded store", table, got, want)
		}
		if table == "work" {
			workRows = want
		}
		// Every kind of object was seeded.
		if want == 0 {
			t.Errorf("%s: nothing seeded", table)
		}
	}
	snap.Close()

	merchant, store := uuid.MustParse(g.Creds.MerchantID), uuid.MustParse(g.Creds.StoreID)
	compareLists(t, src, dst, merchant, store)
	// The claims were the old worker's: on PostgreSQL every item is free
	// to claim at once (in a transaction rolled back).
	if want, got := workRows, int64(claimable(t, dst)); got != want {
		t.Errorf("%d work items claimable on PostgreSQL, want all %d", got, want)
	}

	// The queue numbers new items after the copied ones.
	if err := dst.Update(context.Background(), func(tx payment.Tx) error {
		return tx.InsertWork(context.Background(), payment.WorkKind("capture"), uuid.New(), time.Now().Add(time.Hour))
	}); err != nil {
		t.Errorf("queueing work after the copy: %v", err)
	}

	// A gateway on PostgreSQL, with the data directory's keys.
	g = gatewaytest.Start(t, gatewaytest.Options{DataDir: dataDir, Configure: func(c *gateway.Config) { c.DatabaseURL = dbURL }})
	if g.Auth != auth {
		t.Errorf("the gateway on PostgreSQL issued new demo credentials instead of accepting the old app token")
	}
	c := &gatewaytest.Client{T: t, Base: g.URL, Auth: auth, Store: g.StoreID}
	for id, want := range seed.charges {
		var got map[string]any
		c.Get("/stores/"+g.StoreID+"/charges/"+id, &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("charge %s on PostgreSQL:\n%v\nwant\n%v", id, got, want)
		}
	}
}

// claimable counts the queued items a new worker can claim, due or not,
// rolling its claim back.
func claimable(t *testing.T, db payment.Storage) int {
	t.Helper()
	far := time.Now().Add(100 * 365 * 24 * time.Hour)
	var n int
	errRollBack := errors.New("roll back")
	err := db.Update(context.Background(), func(tx payment.Tx) error {
		items, err := tx.ClaimWork(context.Background(), "new-worker", far, far.Add(time.Hour), 1000)
		n = len(items)
		if err != nil {
			return err
		}
		return errRollBack
	})
	if !errors.Is(err, errRollBack) {
		t.Fatal(err)
	}
	return n
}

// compareLists compares what the lists of payment.Tx give back from both
// engines: migrate checked the objects it reads one by one; the lists
// read them again, through the engines' other queries.
func compareLists(t *testing.T, src, dst payment.Storage, merchant, store uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	p := payment.ListParams{Limit: 100}
	read := func(db payment.Storage) map[string]any {
		t.Helper()
		out := map[string]any{}
		err := db.View(ctx, func(tx payment.Tx) error {
			var errs []error
			keep := func(name string, v any, err error) {
				out[name] = v
				errs = append(errs, err)
			}
			n, err := tx.CountMerchants(ctx)
			keep("merchants", n, err)
			stores, err := tx.ListStores(ctx, merchant, p)
			keep("stores", stores, err)
			appTokens, err := tx.ListAppTokens(ctx, payment.AppTokenFilter{MerchantID: merchant}, p)
			keep("app tokens", appTokens, err)
			tokens, err := tx.ListTokens(ctx, payment.TokenFilter{MerchantID: merchant, Mode: payment.ModeTest}, p)
			keep("tokens", tokens, err)
			charges, err := tx.ListCharges(ctx, payment.ChargeFilter{MerchantID: merchant, Mode: payment.ModeTest}, p)
			keep("charges", charges, err)
			for _, ch := range charges.Items {
				refunds, err := tx.ListRefunds(ctx, ch.ID, p)
				keep("refunds of "+ch.ID.String(), refunds, err)
				cancels, err := tx.ListCancels(ctx, ch.ID, p)
				keep("cancels of "+ch.ID.String(), cancels, err)
			}
			ledger, err := tx.ListLedger(ctx, payment.LedgerFilter{MerchantID: merchant, Mode: payment.ModeTest}, p)
			keep("ledger", ledger, err)
			subs, err := tx.ListSubscriptions(ctx, payment.SubscriptionFilter{MerchantID: merchant, Mode: payment.ModeTest}, p)
			keep("subscriptions", subs, err)
			for _, sub := range subs.Items {
				payments, err := tx.ListScheduledPayments(ctx, sub.ID, p)
				keep("payments of "+sub.ID.String(), payments, err)
			}
			hooks, err := tx.ListWebhooks(ctx, payment.WebhookFilter{MerchantID: merchant, StoreID: store, Mode: payment.ModeTest}, p)
			keep("webhooks", hooks, err)
			for _, h := range hooks.Items {
				deliveries, err := tx.ListDeliveries(ctx, h.ID, p)
				keep("deliveries of "+h.ID.String(), deliveries, err)
			}
			events, err := tx.ListEvents(ctx, payment.EventFilter{MerchantID: merchant, Mode: payment.ModeTest}, 1000)
			keep("events", events, err)
			return errors.Join(errs...)
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	want, got := read(src), read(dst)
	for name, w := range want {
		if d := firstDifference(reflect.ValueOf(got[name]), reflect.ValueOf(w), name); d != "" {
			t.Errorf("%s differs", d)
		}
	}
	for _, name := range []string{"charges", "subscriptions", "events", "webhooks", "ledger"} {
		if reflect.ValueOf(want[name]).IsZero() {
			t.Errorf("no %s to compare", name)
		}
	}
}

// TestMigrateRefuses: migrate changes nothing, and says why, when the
// target is not an empty PostgreSQL schema, when a gateway is running on
// the embedded store, or when there is no store or no target; a password
// in the target's URL is never shown.
func TestMigrateRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("PostgreSQL under -short")
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	gatewaytest.Start(t, gatewaytest.Options{DataDir: dataDir}).Stop()
	migrated := postgrestest.Schema(t)
	if err := Migrate(context.Background(), []string{"--data-dir", dataDir, "--to", migrated}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dataDir string // default: the seeded store's
		to      string // "fresh": a fresh schema
		running bool   // a gateway runs on the store meanwhile
		want    string
	}{
		{name: "non-empty target", to: migrated, want: "already holds data"},
		{name: "gateway running", to: "fresh", running: true, want: "a gateway is running"},
		{name: "no target", want: "KESSAI_DATABASE_URL"},
		{name: "not a postgres URL", to: "mysql://u:hunter2@127.0.0.1/kessai", want: "--to must be a postgres://"},
		{name: "unreachable", to: "postgres://u:hunter2@127.0.0.1:1/kessai?connect_timeout=5", want: "opening postgres://u:xxxxx@127.0.0.1:1/kessai"},
		{name: "no store", dataDir: "empty", to: "fresh", want: "no embedded store"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := dataDir
			if tt.dataDir != "" {
				dir = filepath.Join(t.TempDir(), tt.dataDir)
			}
			to := tt.to
			if to == "fresh" {
				to = postgrestest.Schema(t)
			}
			before := targetRows(t, to)
			if tt.running {
				g := gatewaytest.Start(t, gatewaytest.Options{DataDir: dir})
				defer g.Stop()
			}
			args := []string{"--data-dir", dir}
			if to != "" {
				args = append(args, "--to", to)
			}
			var out bytes.Buffer
			err := Migrate(context.Background(), args, &out)
			if err == nil {
				t.Fatalf("migrate succeeded:\n%s", out.String())
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("migrate: %v; want it to say %q", err, tt.want)
			}
			if strings.Contains(err.Error()+out.String(), "hunter2") {
				t.Errorf("migrate showed the URL's password: %v\n%s", err, out.String())
			}
			if after := targetRows(t, to); !reflect.DeepEqual(after, before) {
				t.Errorf("the target's rows changed from %v to %v", before, after)
			}
		})
	}
}

// targetRows counts the rows of the tables migrate writes in the schema of
// dbURL; nil when dbURL is no PostgreSQL database the test reaches.
func targetRows(t *testing.T, dbURL string) map[string]int64 {
	t.Helper()
	if !strings.HasPrefix(dbURL, postgrestest.URL()[:strings.Index(postgrestest.URL(), "?")]) {
		return nil
	}
	db, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := map[string]int64{}
	for _, table := range []string{"merchants", "stores", "app_tokens", "tokens", "charges", "work", "key_fingerprints"} {
		if rows[table], err = db.Count(context.Background(), table); err != nil {
			t.Fatal(err)
		}
	}
	return rows
}
