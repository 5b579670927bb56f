package storagetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// The merchant console's storage: users by id, sessions and password
// resets found by the hash of their token, store settings written back,
// and the dashboard's counts (ChargeStats). RunConsole runs these areas
// alone; Run runs them with the rest.

// consoleAreas are the console's areas of the suite.
func consoleAreas() []area {
	return []area{
		{"UserByID", testUserByID},
		{"ConsoleSessions", testConsoleSessions},
		{"DeleteConsoleSessions", testDeleteConsoleSessions},
		{"PasswordResets", testPasswordResets},
		{"UsePasswordResets", testUsePasswordResets},
		{"UpdateStore", testUpdateStore},
		{"ChargeStats", testChargeStats},
		{"ConcurrentPasswordResetUses", testConcurrentPasswordResetUses},
		{"ConcurrentStoreUpdates", testConcurrentStoreUpdates},
		{"ConsoleReadsTakeTurns", testConsoleReadsTakeTurns},
	}
}

// RunConsole runs the console's areas of the suite (Run runs them too).
func RunConsole(t *testing.T, open func(t *testing.T) payment.Storage) {
	runAreas(t, open, consoleAreas())
}

// tokenHash is a distinct keyed hash as the console stores one: 32 bytes,
// starting with a zero byte and ending with 0xff, which an engine that
// stores it as text would not give back.
func tokenHash(i int) []byte {
	h := sha256.Sum256([]byte(fmt.Sprintf("storagetest token %d", i)))
	h[0], h[31] = 0x00, 0xff
	return h[:]
}

func createUser(t *testing.T, s payment.Storage, merchantID uuid.UUID, i int) *payment.User {
	t.Helper()
	u := &payment.User{
		ID: payment.NewID(), MerchantID: merchantID, Email: fmt.Sprintf("user%d@kessai.test", i),
		PasswordHash: []byte(fmt.Sprintf("$2a$10$hash-%d\x00\xff", i)), CreatedOn: at(i),
	}
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateUser(ctx, u) })
	return u
}

func newConsoleSession(u *payment.User, i int) *payment.ConsoleSession {
	return &payment.ConsoleSession{
		TokenHash: tokenHash(i), UserID: u.ID, MerchantID: u.MerchantID, Mode: payment.ModeLive,
		CreatedOn: at(i), LastSeenOn: at(i + 60),
	}
}

func createConsoleSessions(t *testing.T, s payment.Storage, ss ...*payment.ConsoleSession) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, x := range ss {
			if err := tx.CreateConsoleSession(ctx, x); err != nil {
				return err
			}
		}
		return nil
	})
}

func newPasswordReset(u *payment.User, i int) *payment.PasswordReset {
	return &payment.PasswordReset{TokenHash: tokenHash(1000 + i), UserID: u.ID, CreatedOn: at(i), ExpiresOn: at(i + 1800)}
}

func createPasswordResets(t *testing.T, s payment.Storage, rs ...*payment.PasswordReset) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, r := range rs {
			if err := tx.CreatePasswordReset(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
}

// inBoth runs fn in a View and in an Update: an engine may read
// differently in each (PostgreSQL marks what an Update reads).
func inBoth(t *testing.T, s payment.Storage, fn func(t *testing.T, ctx context.Context, tx payment.Tx) error) {
	t.Helper()
	for _, kind := range []string{"View", "Update"} {
		t.Run(kind, func(t *testing.T) {
			ctx := t.Context()
			run := s.View
			if kind == "Update" {
				run = s.Update
			}
			if err := run(ctx, func(tx payment.Tx) error { return fn(t, ctx, tx) }); err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
		})
	}
}

// wantNotFound reports err unless it is NOT_FOUND.
func wantNotFound(t *testing.T, what string, err error) {
	t.Helper()
	if !payment.IsNotFound(err) {
		t.Errorf("%s: got %v (code %s), want NOT_FOUND", what, err, payment.ErrorCode(err))
	}
}

func readConsoleSession(t *testing.T, s payment.Storage, hash []byte) (*payment.ConsoleSession, error) {
	t.Helper()
	var got *payment.ConsoleSession
	var err error
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err = tx.ConsoleSession(ctx, hash)
		return nil
	})
	return got, err
}

func readPasswordReset(t *testing.T, s payment.Storage, hash []byte) *payment.PasswordReset {
	t.Helper()
	var r *payment.PasswordReset
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		r, err = tx.PasswordReset(ctx, hash)
		return err
	})
	return r
}

// testUserByID: User finds a user by id, and nothing else: a missing id,
// the nil id and another kind's id (its merchant's) are NOT_FOUND.
func testUserByID(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u, other := createUser(t, s, m.ID, 1), createUser(t, s, m.ID, 2)
	requireNoZeroFields(t, u)
	inBoth(t, s, func(t *testing.T, ctx context.Context, tx payment.Tx) error {
		for _, want := range []*payment.User{u, other} {
			got, err := tx.User(ctx, want.ID)
			if err != nil {
				return err
			}
			checkSame(t, got, want)
		}
		for name, id := range map[string]uuid.UUID{"Missing": payment.NewID(), "Nil": uuid.Nil, "Merchant": m.ID} {
			_, err := tx.User(ctx, id)
			wantNotFound(t, "User "+name, err)
		}
		return nil
	})
}

// testConsoleSessions: a session comes back as created, found by the exact
// bytes of its hash (not a prefix, not one byte off); an update writes its
// mode and last sight and nothing of another session; a deleted session is
// NOT_FOUND, and deleting it again is no error.
func testConsoleSessions(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u := createUser(t, s, m.ID, 1)
	sess, other := newConsoleSession(u, 1), newConsoleSession(u, 2)
	other.Mode = payment.ModeTest
	requireNoZeroFields(t, sess)
	createConsoleSessions(t, s, sess, other)
	offByOne := slices.Clone(sess.TokenHash)
	offByOne[31]--
	inBoth(t, s, func(t *testing.T, ctx context.Context, tx payment.Tx) error {
		for _, want := range []*payment.ConsoleSession{sess, other} {
			got, err := tx.ConsoleSession(ctx, want.TokenHash)
			if err != nil {
				return err
			}
			checkSame(t, got, want)
		}
		for name, h := range map[string][]byte{"Missing": tokenHash(99), "Prefix": sess.TokenHash[:31],
			"OffByOne": offByOne, "Empty": {}} {
			_, err := tx.ConsoleSession(ctx, h)
			wantNotFound(t, "ConsoleSession "+name, err)
		}
		return nil
	})

	changed := *sess
	changed.Mode, changed.LastSeenOn = payment.ModeTest, at(500)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateConsoleSession(ctx, &changed) })
	got, err := readConsoleSession(t, s, sess.TokenHash)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, got, &changed)
	if got, err := readConsoleSession(t, s, other.TokenHash); err != nil {
		t.Fatal(err)
	} else {
		checkSame(t, got, other)
	}
	missing := newConsoleSession(u, 98)
	err = s.Update(t.Context(), func(tx payment.Tx) error { return tx.UpdateConsoleSession(t.Context(), missing) })
	wantNotFound(t, "UpdateConsoleSession of a missing session", err)

	for range 2 {
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.DeleteConsoleSession(ctx, sess.TokenHash) })
		_, err := readConsoleSession(t, s, sess.TokenHash)
		wantNotFound(t, "ConsoleSession after DeleteConsoleSession", err)
	}
	if _, err := readConsoleSession(t, s, other.TokenHash); err != nil {
		t.Errorf("another session after DeleteConsoleSession: %v", err)
	}
}

// testDeleteConsoleSessions: a user's sessions created strictly before the
// first bound, or last seen strictly before the second, are deleted; one
// created or last seen exactly at its bound stays, and so does every
// session of another user.
func testDeleteConsoleSessions(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u, v := createUser(t, s, m.ID, 1), createUser(t, s, m.ID, 2)
	jst := time.FixedZone("JST", 9*60*60)
	createdBefore := time.Date(2025, 3, 1, 9, 0, 0, 0, jst)
	seenBefore := time.Date(2025, 3, 1, 20, 30, 0, 0, jst)
	late := seenBefore.Add(time.Hour)
	mk := func(user *payment.User, i int, created, seen time.Time) *payment.ConsoleSession {
		x := newConsoleSession(user, i)
		x.CreatedOn, x.LastSeenOn = created, seen
		return x
	}
	cases := []struct {
		name    string
		sess    *payment.ConsoleSession
		deleted bool
	}{
		{"CreatedJustBefore", mk(u, 1, createdBefore.Add(-time.Microsecond), late), true},
		{"CreatedAtBound", mk(u, 2, createdBefore, late), false},
		{"SeenJustBefore", mk(u, 3, late, seenBefore.Add(-time.Microsecond)), true},
		{"SeenAtBound", mk(u, 4, late, seenBefore), false},
		{"Fresh", mk(u, 5, late, late), false},
		{"BothBefore", mk(u, 6, createdBefore.Add(-time.Hour), seenBefore.Add(-time.Hour)), true},
		{"OtherUserBothBefore", mk(v, 7, createdBefore.Add(-time.Hour), seenBefore.Add(-time.Hour)), false},
	}
	for _, c := range cases {
		createConsoleSessions(t, s, c.sess)
	}
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		return tx.DeleteConsoleSessions(ctx, u.ID, createdBefore.UTC(), seenBefore)
	})
	for _, c := range cases {
		_, err := readConsoleSession(t, s, c.sess.TokenHash)
		switch {
		case c.deleted && !payment.IsNotFound(err):
			t.Errorf("%s: %v, want it deleted", c.name, err)
		case !c.deleted && err != nil:
			t.Errorf("%s: %v, want it kept", c.name, err)
		}
	}
}

// testPasswordResets: a reset comes back as created, unused (UsedOn nil) or
// used, found by the exact bytes of its hash.
func testPasswordResets(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u := createUser(t, s, m.ID, 1)
	used, unused := newPasswordReset(u, 1), newPasswordReset(u, 2)
	used.UsedOn = timep(at(77))
	requireNoZeroFields(t, used)
	createPasswordResets(t, s, used, unused)
	inBoth(t, s, func(t *testing.T, ctx context.Context, tx payment.Tx) error {
		for _, want := range []*payment.PasswordReset{used, unused} {
			got, err := tx.PasswordReset(ctx, want.TokenHash)
			if err != nil {
				return err
			}
			checkSame(t, got, want)
		}
		for name, h := range map[string][]byte{"Missing": tokenHash(99), "Prefix": used.TokenHash[:16],
			"SessionHash": tokenHash(1)} {
			_, err := tx.PasswordReset(ctx, h)
			wantNotFound(t, "PasswordReset "+name, err)
		}
		return nil
	})
}

// testUsePasswordResets: UsePasswordResets marks every unused reset of the
// user used at the time given, and leaves a reset already used, and every
// reset of another user, as they were.
func testUsePasswordResets(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u, v := createUser(t, s, m.ID, 1), createUser(t, s, m.ID, 2)
	r1, r2, r3, rv := newPasswordReset(u, 1), newPasswordReset(u, 2), newPasswordReset(u, 3), newPasswordReset(v, 4)
	r2.UsedOn = timep(at(20))
	createPasswordResets(t, s, r1, r2, r3, rv)
	now := at(100)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UsePasswordResets(ctx, u.ID, now) })
	for _, c := range []struct {
		name string
		r    *payment.PasswordReset
		want *time.Time
	}{
		{"Unused", r1, &now}, {"AlreadyUsed", r2, r2.UsedOn}, {"AnotherUnused", r3, &now}, {"OtherUser", rv, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := *c.r
			want.UsedOn = c.want
			checkSame(t, readPasswordReset(t, s, c.r.TokenHash), &want)
		})
	}
	// Nothing left to use: no error, nothing changes.
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UsePasswordResets(ctx, u.ID, at(200)) })
	if got := readPasswordReset(t, s, r1.TokenHash); got.UsedOn == nil || !got.UsedOn.Equal(now.Truncate(time.Microsecond)) {
		t.Errorf("a second UsePasswordResets moved a used reset's UsedOn to %v", got.UsedOn)
	}
}

// testUpdateStore: UpdateStore writes the name, the PCI flag and every
// setting (an update to nothing set clears them), leaves another store as
// it was, and is NOT_FOUND for a missing store.
func testUpdateStore(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st, other := createStore(t, s, m.ID, 1), createStore(t, s, m.ID, 2)
	full := fullStore(m.ID)
	changed := *st
	changed.Name, changed.PCICompliant, changed.Settings = full.Name, !st.PCICompliant, full.Settings
	changed.Settings.ForbiddenCardBrands = []string{"american_express", "unionpay"}
	changed.Settings.RecurringType = payment.RecurringInfinite
	requireNoZeroFields(t, &changed)
	cleared := changed
	cleared.Name, cleared.PCICompliant, cleared.Settings = "Plain", false, payment.StoreSettings{}
	for _, want := range []*payment.Store{&changed, &cleared} {
		update(t, s, func(ctx context.Context, tx payment.Tx) error { w := *want; return tx.UpdateStore(ctx, &w) })
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.Store(ctx, st.ID)
			if err != nil {
				return err
			}
			checkSame(t, got, want)
			got, err = tx.Store(ctx, other.ID)
			if err != nil {
				return err
			}
			checkSame(t, got, other)
			return nil
		})
	}
	missing := newStore(m.ID, 3)
	err := s.Update(t.Context(), func(tx payment.Tx) error { return tx.UpdateStore(t.Context(), missing) })
	wantNotFound(t, "UpdateStore of a missing store", err)
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		_, err := tx.Store(ctx, missing.ID)
		wantNotFound(t, "Store after UpdateStore of a missing store", err)
		return nil
	})
}

// sortStats orders stats by status, then currency, for comparison.
func sortStats(stats []payment.ChargeStat) []payment.ChargeStat {
	out := slices.Clone(stats)
	slices.SortFunc(out, func(a, b payment.ChargeStat) int {
		return strings.Compare(string(a.Status)+"/"+a.Currency, string(b.Status)+"/"+b.Currency)
	})
	return out
}

// testChargeStats: ChargeStats counts and sums the requested amounts of a
// merchant's charges of one mode created in [From, To) by status and
// currency, for all its stores or one; a charge exactly at From counts,
// one exactly at To does not; no group is listed without charges.
func testChargeStats(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	live, live2, other := newToken(w.st, 1), newToken(w.st2, 2), newToken(w.otherSt, 3)
	test := newToken(w.st, 4)
	test.Mode = payment.ModeTest
	createTokens(t, s, live, live2, other, test)
	jst := time.FixedZone("JST", 9*60*60)
	from := time.Date(2025, 2, 1, 9, 0, 0, 0, jst)
	to := from.Add(24 * time.Hour)
	mid := from.Add(7*time.Hour + 123456789)
	i := 0
	charge := func(tok *payment.TransactionToken, status payment.ChargeStatus, currency string, amount int64, created time.Time) *payment.Charge {
		i++
		ch := newCharge(tok, 10+i)
		ch.Status, ch.Currency, ch.RequestedAmount, ch.CreatedOn = status, currency, amount, created
		return ch
	}
	createCharges(t, s,
		charge(live, payment.ChargeSuccessful, "JPY", 1000, from),
		charge(live, payment.ChargeSuccessful, "JPY", 2500, mid),
		charge(live2, payment.ChargeSuccessful, "JPY", 400, mid),
		charge(live, payment.ChargeFailed, "JPY", 700, to.Add(-time.Microsecond)),
		charge(live, payment.ChargeSuccessful, "USD", 300, mid),
		charge(live2, payment.ChargePending, "USD", 50, mid),
		// Outside: before From, at To, in test mode, another merchant's.
		charge(live, payment.ChargeSuccessful, "JPY", 9_001, from.Add(-time.Microsecond)),
		charge(live, payment.ChargeSuccessful, "JPY", 9_002, to),
		charge(test, payment.ChargeSuccessful, "JPY", 9_003, mid),
		charge(other, payment.ChargeSuccessful, "JPY", 9_004, mid),
	)
	stat := func(status payment.ChargeStatus, currency string, count int, amount int64) payment.ChargeStat {
		return payment.ChargeStat{Status: status, Currency: currency, Count: count, Amount: amount}
	}
	merchant := payment.ChargeStatsFilter{MerchantID: w.m.ID, Mode: payment.ModeLive, From: from, To: to}
	with := func(f payment.ChargeStatsFilter, change func(*payment.ChargeStatsFilter)) payment.ChargeStatsFilter {
		change(&f)
		return f
	}
	cases := []struct {
		name   string
		filter payment.ChargeStatsFilter
		want   []payment.ChargeStat
	}{
		{"Merchant", merchant, []payment.ChargeStat{
			stat(payment.ChargeFailed, "JPY", 1, 700), stat(payment.ChargePending, "USD", 1, 50),
			stat(payment.ChargeSuccessful, "JPY", 3, 3900), stat(payment.ChargeSuccessful, "USD", 1, 300),
		}},
		{"Store", with(merchant, func(f *payment.ChargeStatsFilter) { f.StoreID = w.st.ID }), []payment.ChargeStat{
			stat(payment.ChargeFailed, "JPY", 1, 700), stat(payment.ChargeSuccessful, "JPY", 2, 3500),
			stat(payment.ChargeSuccessful, "USD", 1, 300),
		}},
		{"OtherStore", with(merchant, func(f *payment.ChargeStatsFilter) { f.StoreID = w.st2.ID }), []payment.ChargeStat{
			stat(payment.ChargePending, "USD", 1, 50), stat(payment.ChargeSuccessful, "JPY", 1, 400),
		}},
		{"TestMode", with(merchant, func(f *payment.ChargeStatsFilter) { f.Mode = payment.ModeTest }), []payment.ChargeStat{
			stat(payment.ChargeSuccessful, "JPY", 1, 9_003),
		}},
		{"OtherMerchant", with(merchant, func(f *payment.ChargeStatsFilter) { f.MerchantID = w.other.ID }), []payment.ChargeStat{
			stat(payment.ChargeSuccessful, "JPY", 1, 9_004),
		}},
		{"OtherMerchantsStore", with(merchant, func(f *payment.ChargeStatsFilter) { f.StoreID = w.otherSt.ID }), nil},
		{"NextDay", with(merchant, func(f *payment.ChargeStatsFilter) { f.From, f.To = to, to.Add(24*time.Hour) }), []payment.ChargeStat{
			stat(payment.ChargeSuccessful, "JPY", 1, 9_002),
		}},
		{"Empty", with(merchant, func(f *payment.ChargeStatsFilter) { f.From, f.To = to.Add(time.Hour), to.Add(2*time.Hour) }), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []payment.ChargeStat
			view(t, s, func(ctx context.Context, tx payment.Tx) error {
				var err error
				got, err = tx.ChargeStats(ctx, c.filter)
				return err
			})
			if got, want := sortStats(got), sortStats(c.want); !(len(got) == 0 && len(want) == 0) && !slices.Equal(got, want) {
				t.Errorf("ChargeStats = %+v\nwant %+v", got, want)
			}
		})
	}
}

var errResetUsed = errors.New("storagetest: the reset link is used")

// testConcurrentPasswordResetUses: concurrent Updates each using one reset
// link (read it, refuse it when used, else use the user's resets and sign
// in) succeed exactly once: the link works once however many submit it.
func testConcurrentPasswordResetUses(t *testing.T, s payment.Storage) {
	const workers = 20
	m := createMerchant(t, s, 1)
	u := createUser(t, s, m.ID, 1)
	r := newPasswordReset(u, 1)
	createPasswordResets(t, s, r)
	errs := concurrently(workers, func(i int) error {
		ctx := context.Background()
		return s.Update(ctx, func(tx payment.Tx) error {
			cur, err := tx.PasswordReset(ctx, r.TokenHash)
			if err != nil {
				return err
			}
			if cur.UsedOn != nil {
				return errResetUsed
			}
			if err := tx.UsePasswordResets(ctx, u.ID, at(100+i)); err != nil {
				return err
			}
			return tx.CreateConsoleSession(ctx, newConsoleSession(u, 100+i))
		})
	})
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("uses %d and %d of one reset link both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, errResetUsed):
			t.Errorf("use %d: %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("none of %d uses of an unused reset link succeeded", workers)
	}
	if got := readPasswordReset(t, s, r.TokenHash); got.UsedOn == nil || !got.UsedOn.Equal(at(100+winner).Truncate(time.Microsecond)) {
		t.Errorf("UsedOn = %v, want the successful use's %v", got.UsedOn, at(100+winner))
	}
}

// testConcurrentStoreUpdates: concurrent read-modify-writes of one store,
// half changing its name and half its settings (as two console pages
// saved at once would), keep every change of both kinds.
func testConcurrentStoreUpdates(t *testing.T, s payment.Storage) {
	const workers = 20
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	st.Name, st.Settings.LogoImage = "0", "0"
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateStore(ctx, st) })
	bump := func(v *string) error {
		var n int
		if _, err := fmt.Sscan(*v, &n); err != nil {
			return err
		}
		*v = fmt.Sprint(n + 1)
		return nil
	}
	errs := concurrently(workers, func(i int) error {
		ctx := context.Background()
		return s.Update(ctx, func(tx payment.Tx) error {
			cur, err := tx.Store(ctx, st.ID)
			if err != nil {
				return err
			}
			field := &cur.Name
			if i%2 == 1 {
				field = &cur.Settings.LogoImage
			}
			if err := bump(field); err != nil {
				return err
			}
			return tx.UpdateStore(ctx, cur)
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("update %d: %v", i, err)
		}
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.Store(ctx, st.ID)
		if err != nil {
			return err
		}
		if want := fmt.Sprint(workers / 2); got.Name != want || got.Settings.LogoImage != want {
			t.Errorf("after %d concurrent name and %d settings changes: name %s, logo %s, want %s each",
				workers/2, workers/2, got.Name, got.Settings.LogoImage, want)
		}
		return nil
	})
}

// testConsoleReadsTakeTurns: a user, session or reset an Update reads is
// read for writing. While one Update has changed it and not yet
// committed, another Update reads it and is given up to half a second to
// finish (an engine with one writer makes it wait instead): what the
// second Update went on with must be the first one's change, never the
// row as it was, which the first is about to replace (a reset link seen
// unused as it is being used).
func testConsoleReadsTakeTurns(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u := createUser(t, s, m.ID, 1)
	sess := newConsoleSession(u, 1)
	createConsoleSessions(t, s, sess)
	r := newPasswordReset(u, 1)
	createPasswordResets(t, s, r)
	newHash := []byte("$2a$10$changed")
	cases := []struct {
		name  string
		write func(ctx context.Context, tx payment.Tx) error
		// read reports whether the Update saw the write.
		read func(ctx context.Context, tx payment.Tx) (bool, error)
	}{
		{"PasswordReset", func(ctx context.Context, tx payment.Tx) error {
			return tx.UsePasswordResets(ctx, u.ID, at(50))
		}, func(ctx context.Context, tx payment.Tx) (bool, error) {
			x, err := tx.PasswordReset(ctx, r.TokenHash)
			return err == nil && x.UsedOn != nil, err
		}},
		{"ConsoleSession", func(ctx context.Context, tx payment.Tx) error {
			changed := *sess
			changed.Mode = payment.ModeTest
			return tx.UpdateConsoleSession(ctx, &changed)
		}, func(ctx context.Context, tx payment.Tx) (bool, error) {
			x, err := tx.ConsoleSession(ctx, sess.TokenHash)
			return err == nil && x.Mode == payment.ModeTest, err
		}},
		{"User", func(ctx context.Context, tx payment.Tx) error {
			return tx.SetUserPassword(ctx, u.ID, newHash)
		}, func(ctx context.Context, tx payment.Tx) (bool, error) {
			x, err := tx.User(ctx, u.ID)
			return err == nil && string(x.PasswordHash) == string(newHash), err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			written, read := make(chan struct{}), make(chan error, 1)
			var saw bool
			go func() {
				<-written
				ctx := context.Background()
				read <- s.Update(ctx, func(tx payment.Tx) error {
					var err error
					saw, err = c.read(ctx, tx)
					return err
				})
			}()
			ctx := t.Context()
			err := s.Update(ctx, func(tx payment.Tx) error {
				if err := c.write(ctx, tx); err != nil {
					return err
				}
				select {
				case <-written:
				default:
					close(written)
				}
				select {
				case err := <-read:
					read <- err
				case <-time.After(500 * time.Millisecond):
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-read; err != nil {
				t.Fatal(err)
			}
			if !saw {
				t.Error("an Update read the row as it was while another, which committed, was changing it")
			}
		})
	}
}
