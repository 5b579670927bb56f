// Package storagetest is the conformance suite every storage engine of
// Kessai must pass (SQLite now, PostgreSQL later). An engine's own tests
// call Run with a function that opens an empty store:
//
//	func TestConformance(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) payment.Storage {
//			db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "kessai.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { db.Close() })
//			return db
//		})
//	}
//
// The suite checks what package payment relies on and cannot check itself:
// that every field comes back as it was written (times to the microsecond,
// in UTC), that missing rows are NOT_FOUND, how lists page, that revoked
// app tokens leave lists and the CORS domain set, that quotas are atomic
// under concurrency, that Update is all or nothing and that View cannot
// write.
package storagetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Run runs the conformance suite. open must return a new, empty storage
// each time it is called and arrange (with t.Cleanup) for it to be closed.
func Run(t *testing.T, open func(t *testing.T) payment.Storage) {
	t.Run("Merchants", func(t *testing.T) { testMerchants(t, open(t)) })
	t.Run("Users", func(t *testing.T) { testUsers(t, open(t)) })
	t.Run("Stores", func(t *testing.T) { testStores(t, open(t)) })
	t.Run("AppTokens", func(t *testing.T) { testAppTokens(t, open(t)) })
	t.Run("NotFound", func(t *testing.T) { testNotFound(t, open(t)) })
	t.Run("DuplicateIDs", func(t *testing.T) { testDuplicateIDs(t, open(t)) })
	t.Run("ListStores", func(t *testing.T) { testListStores(t, open(t)) })
	t.Run("ListAppTokens", func(t *testing.T) { testListAppTokens(t, open(t)) })
	t.Run("ActiveDomains", func(t *testing.T) { testActiveDomains(t, open(t)) })
	t.Run("Quota", func(t *testing.T) { testQuota(t, open(t)) })
	t.Run("QuotaConcurrent", func(t *testing.T) { testQuotaConcurrent(t, open(t)) })
	t.Run("UpdateRollsBack", func(t *testing.T) { testUpdateRollsBack(t, open(t)) })
	t.Run("ViewCannotWrite", func(t *testing.T) { testViewCannotWrite(t, open(t)) })
}

// base is a time with nanoseconds and a zone other than UTC: engines must
// give it back truncated to the microsecond, in UTC.
var base = time.Date(2025, 1, 31, 17, 41, 8, 925809123, time.FixedZone("JST", 9*60*60))

// at returns base moved by i seconds and a few nanoseconds more.
func at(i int) time.Time { return base.Add(time.Duration(i)*time.Second + time.Duration(i%7)) }

func update(t *testing.T, s payment.Storage, fn func(ctx context.Context, tx payment.Tx) error) {
	t.Helper()
	ctx := t.Context()
	if err := s.Update(ctx, func(tx payment.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

func view(t *testing.T, s payment.Storage, fn func(ctx context.Context, tx payment.Tx) error) {
	t.Helper()
	ctx := t.Context()
	if err := s.View(ctx, func(tx payment.Tx) error { return fn(ctx, tx) }); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// checkTime reports got unless it is want truncated to the microsecond and
// in UTC.
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	want = want.Truncate(time.Microsecond).UTC()
	if !got.Equal(want) {
		t.Errorf("%s = %s, want %s", what, got.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	if got.Location() != time.UTC {
		t.Errorf("%s is in %v, want UTC", what, got.Location())
	}
}

func newMerchant(i int) *payment.Merchant {
	return &payment.Merchant{
		ID: payment.NewID(), Name: fmt.Sprintf("Merchant %d — 決済", i),
		Email: fmt.Sprintf("merchant%d@kessai.test", i), Verified: i%2 == 0, CreatedOn: at(i),
	}
}

func newStore(merchantID uuid.UUID, i int) *payment.Store {
	settings := payment.DefaultStoreSettings()
	settings.ThreeDSRequired = i%2 == 1
	settings.LogoImage = fmt.Sprintf("https://cdn.example/logo-%d.png", i)
	settings.Currencies = []string{"JPY", "USD"}
	return &payment.Store{
		ID: payment.NewID(), MerchantID: merchantID, Name: fmt.Sprintf("Store %d", i),
		PCICompliant: i%2 == 0, Settings: settings, CreatedOn: at(i),
	}
}

func newAppToken(merchantID, storeID uuid.UUID, i int, domains ...string) *payment.AppToken {
	mode := payment.ModeTest
	if i%2 == 1 {
		mode = payment.ModeLive
	}
	id := payment.NewID()
	return &payment.AppToken{
		ID: id, MerchantID: merchantID, StoreID: storeID, CreatorID: payment.NewID(), Mode: mode,
		Domains: domains, SecretHash: []byte(fmt.Sprintf("hash-%d-\x00\xff", i)),
		JWT: "header.payload-" + id.String() + ".signature", CreatedOn: at(i),
	}
}

// createMerchant stores a new merchant in its own transaction.
func createMerchant(t *testing.T, s payment.Storage, i int) *payment.Merchant {
	t.Helper()
	m := newMerchant(i)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateMerchant(ctx, m) })
	return m
}

func createStore(t *testing.T, s payment.Storage, merchantID uuid.UUID, i int) *payment.Store {
	t.Helper()
	st := newStore(merchantID, i)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, st) })
	return st
}

func createAppToken(t *testing.T, s payment.Storage, merchantID, storeID uuid.UUID, i int, domains ...string) *payment.AppToken {
	t.Helper()
	tok := newAppToken(merchantID, storeID, i, domains...)
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateAppToken(ctx, tok) })
	return tok
}

func revoke(t *testing.T, s payment.Storage, id uuid.UUID, when time.Time) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.RevokeAppToken(ctx, id, when) })
}

// emptyIsNil treats a nil and an empty slice alike: engines may give back
// either for an empty list.
func emptyIsNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func testMerchants(t *testing.T, s payment.Storage) {
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err == nil && n != 0 {
			t.Errorf("CountMerchants on an empty store = %d, want 0", n)
		}
		return err
	})
	m1, m2 := createMerchant(t, s, 1), createMerchant(t, s, 2)
	for _, want := range []*payment.Merchant{m1, m2} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.Merchant(ctx, want.ID)
			if err != nil {
				return err
			}
			checkTime(t, "merchant created_on", got.CreatedOn, want.CreatedOn)
			g, w := *got, *want
			g.CreatedOn, w.CreatedOn = time.Time{}, time.Time{}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Merchant = %+v, want %+v", g, w)
			}
			return nil
		})
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err == nil && n != 2 {
			t.Errorf("CountMerchants = %d, want 2", n)
		}
		return err
	})
}

func testUsers(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	u := &payment.User{
		ID: payment.NewID(), MerchantID: m.ID, Email: "owner@kessai.test",
		PasswordHash: []byte("$2a$10$first-hash\x00"), CreatedOn: at(3),
	}
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateUser(ctx, u) })
	check := func(wantHash []byte) {
		t.Helper()
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.UserByEmail(ctx, u.Email)
			if err != nil {
				return err
			}
			checkTime(t, "user created_on", got.CreatedOn, u.CreatedOn)
			if got.ID != u.ID || got.MerchantID != u.MerchantID || got.Email != u.Email ||
				string(got.PasswordHash) != string(wantHash) {
				t.Errorf("UserByEmail = %+v, want %+v with hash %q", got, u, wantHash)
			}
			return nil
		})
	}
	check(u.PasswordHash)
	newHash := []byte("$2a$10$second-hash")
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.SetUserPassword(ctx, u.ID, newHash) })
	check(newHash)
}

func testStores(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	full := createStore(t, s, m.ID, 1)
	plain := newStore(m.ID, 2)
	plain.Settings = payment.StoreSettings{} // nothing set at all
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, plain) })
	for _, want := range []*payment.Store{full, plain} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.Store(ctx, want.ID)
			if err != nil {
				return err
			}
			checkTime(t, "store created_on", got.CreatedOn, want.CreatedOn)
			g, w := *got, *want
			g.CreatedOn, w.CreatedOn = time.Time{}, time.Time{}
			g.Settings.Currencies, w.Settings.Currencies = emptyIsNil(g.Settings.Currencies), emptyIsNil(w.Settings.Currencies)
			if !reflect.DeepEqual(g, w) {
				t.Errorf("Store = %+v, want %+v", g, w)
			}
			return nil
		})
	}
}

// checkAppToken compares every field of a token read back with what was
// written; revokedOn is the expected revocation time or nil.
func checkAppToken(t *testing.T, got, want *payment.AppToken, revokedOn *time.Time) {
	t.Helper()
	checkTime(t, "app token created_on", got.CreatedOn, want.CreatedOn)
	switch {
	case revokedOn == nil && got.RevokedOn != nil:
		t.Errorf("app token %s revoked_on = %v, want none", want.ID, got.RevokedOn)
	case revokedOn != nil && got.RevokedOn == nil:
		t.Errorf("app token %s is not revoked, want revoked_on %v", want.ID, revokedOn)
	case revokedOn != nil:
		checkTime(t, "app token revoked_on", *got.RevokedOn, *revokedOn)
	}
	if got.Active() != (revokedOn == nil) {
		t.Errorf("app token %s Active() = %v", want.ID, got.Active())
	}
	g, w := *got, *want
	g.CreatedOn, w.CreatedOn, g.RevokedOn, w.RevokedOn = time.Time{}, time.Time{}, nil, nil
	g.Domains, w.Domains = emptyIsNil(g.Domains), emptyIsNil(w.Domains)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("AppToken =\n  %+v\nwant\n  %+v", g, w)
	}
}

func testAppTokens(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	storeTok := createAppToken(t, s, m.ID, st.ID, 1, "shop.example", "*.shop.example", "localhost:8081")
	merchantTok := createAppToken(t, s, m.ID, uuid.Nil, 2)
	noCreator := newAppToken(m.ID, st.ID, 3)
	noCreator.CreatorID = uuid.Nil
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateAppToken(ctx, noCreator) })

	for _, want := range []*payment.AppToken{storeTok, merchantTok, noCreator} {
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.AppToken(ctx, want.ID)
			if err != nil {
				return err
			}
			checkAppToken(t, got, want, nil)
			return nil
		})
	}

	t.Run("Revoke", func(t *testing.T) {
		when := at(100)
		revoke(t, s, storeTok.ID, when)
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			got, err := tx.AppToken(ctx, storeTok.ID)
			if err != nil {
				return err
			}
			checkAppToken(t, got, storeTok, &when)
			// The other tokens are untouched.
			other, err := tx.AppToken(ctx, noCreator.ID)
			if err != nil {
				return err
			}
			checkAppToken(t, other, noCreator, nil)
			return nil
		})
	})
}

func testNotFound(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	createStore(t, s, m.ID, 1)
	missing := payment.NewID()
	cases := []struct {
		name string
		get  func(ctx context.Context, tx payment.Tx) error
	}{
		{"Merchant", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Merchant(ctx, missing); return err }},
		{"MerchantNil", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Merchant(ctx, uuid.Nil); return err }},
		{"UserByEmail", func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.UserByEmail(ctx, "nobody@kessai.test")
			return err
		}},
		{"Store", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Store(ctx, missing); return err }},
		{"StoreIsNotMerchant", func(ctx context.Context, tx payment.Tx) error { _, err := tx.Store(ctx, m.ID); return err }},
		{"AppToken", func(ctx context.Context, tx payment.Tx) error { _, err := tx.AppToken(ctx, missing); return err }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.View(t.Context(), func(tx payment.Tx) error { return c.get(t.Context(), tx) })
			if !payment.IsNotFound(err) {
				t.Errorf("got %v (code %s), want NOT_FOUND", err, payment.ErrorCode(err))
			}
		})
	}
}

func testDuplicateIDs(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	tok := createAppToken(t, s, m.ID, st.ID, 1)
	u := &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: "dup@kessai.test", PasswordHash: []byte("x"), CreatedOn: at(1)}
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateUser(ctx, u) })
	cases := []struct {
		name   string
		create func(ctx context.Context, tx payment.Tx) error
	}{
		{"Merchant", func(ctx context.Context, tx payment.Tx) error {
			again := newMerchant(2)
			again.ID = m.ID
			return tx.CreateMerchant(ctx, again)
		}},
		{"Store", func(ctx context.Context, tx payment.Tx) error {
			again := newStore(m.ID, 2)
			again.ID = st.ID
			return tx.CreateStore(ctx, again)
		}},
		{"AppToken", func(ctx context.Context, tx payment.Tx) error {
			again := newAppToken(m.ID, st.ID, 2)
			again.ID = tok.ID
			return tx.CreateAppToken(ctx, again)
		}},
		{"UserEmail", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateUser(ctx, &payment.User{ID: payment.NewID(), MerchantID: m.ID, Email: u.Email,
				PasswordHash: []byte("y"), CreatedOn: at(2)})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Update(t.Context(), func(tx payment.Tx) error { return c.create(t.Context(), tx) })
			if err == nil {
				t.Fatal("creating a second row with the same key succeeded")
			}
		})
	}
	// The originals are intact.
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		got, err := tx.AppToken(ctx, tok.ID)
		if err != nil {
			return err
		}
		checkAppToken(t, got, tok, nil)
		gotUser, err := tx.UserByEmail(ctx, u.Email)
		if err == nil && gotUser.ID != u.ID {
			t.Errorf("user %s replaced by %s", u.ID, gotUser.ID)
		}
		return err
	})
}

// pageCheck is what one page of a list should hold.
type pageCheck struct {
	name    string
	params  payment.ListParams
	want    []uuid.UUID
	hasMore bool
	total   *int // nil: TotalHits must be absent
}

func intp(n int) *int { return &n }

func checkPage[T any](t *testing.T, c pageCheck, page payment.Page[T], id func(T) uuid.UUID) {
	t.Helper()
	got := make([]uuid.UUID, 0, len(page.Items))
	for _, item := range page.Items {
		got = append(got, id(item))
	}
	if !slices.Equal(got, c.want) {
		t.Errorf("items = %v\nwant %v", got, c.want)
	}
	if page.HasMore != c.hasMore {
		t.Errorf("HasMore = %v, want %v", page.HasMore, c.hasMore)
	}
	switch {
	case c.total == nil && page.TotalHits != nil:
		t.Errorf("TotalHits = %d with a cursor, want absent", *page.TotalHits)
	case c.total != nil && page.TotalHits == nil:
		t.Errorf("TotalHits absent, want %d", *c.total)
	case c.total != nil && *page.TotalHits != *c.total:
		t.Errorf("TotalHits = %d, want %d", *page.TotalHits, *c.total)
	}
}

// sortedIDs returns ids in creation order: v7 ids sort by creation time.
func sortedIDs(ids []uuid.UUID) []uuid.UUID {
	out := slices.Clone(ids)
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func reversed(ids []uuid.UUID) []uuid.UUID {
	out := slices.Clone(ids)
	slices.Reverse(out)
	return out
}

// pagingCases are the page checks of a list of n >= 25 items whose ids in
// creation order are asc.
func pagingCases(asc []uuid.UUID) []pageCheck {
	n := len(asc)
	desc := reversed(asc)
	return []pageCheck{
		{"DescByDefault", payment.ListParams{Limit: 10}, desc[:10], true, intp(n)},
		{"DescExplicit", payment.ListParams{Limit: 10, Direction: payment.Desc}, desc[:10], true, intp(n)},
		{"Asc", payment.ListParams{Limit: 10, Direction: payment.Asc}, asc[:10], true, intp(n)},
		{"LimitOne", payment.ListParams{Limit: 1}, desc[:1], true, intp(n)},
		{"LimitExactlyAll", payment.ListParams{Limit: n}, desc, false, intp(n)},
		{"LimitOneShort", payment.ListParams{Limit: n - 1}, desc[:n-1], true, intp(n)},
		{"LimitMax", payment.ListParams{Limit: payment.MaxLimit}, desc, false, intp(n)},
		{"DescCursorExcluded", payment.ListParams{Limit: 10, Cursor: desc[9]}, desc[10:20], true, nil},
		{"DescCursorLastPage", payment.ListParams{Limit: 10, Cursor: desc[19]}, desc[20:], false, nil},
		{"DescCursorExactEnd", payment.ListParams{Limit: n - 10, Cursor: desc[9]}, desc[10:], false, nil},
		{"DescCursorOldest", payment.ListParams{Limit: 10, Cursor: desc[n-1]}, []uuid.UUID{}, false, nil},
		{"AscCursorExcluded", payment.ListParams{Limit: 10, Cursor: asc[9], Direction: payment.Asc}, asc[10:20], true, nil},
		{"AscCursorLastPage", payment.ListParams{Limit: 10, Cursor: asc[19], Direction: payment.Asc}, asc[20:], false, nil},
		{"AscCursorNewest", payment.ListParams{Limit: 10, Cursor: asc[n-1], Direction: payment.Asc}, []uuid.UUID{}, false, nil},
		// A cursor is an exclusive bound, not necessarily an item of the
		// list: here the newest item's id seen from the other end.
		{"DescCursorNewest", payment.ListParams{Limit: 3, Cursor: desc[0]}, desc[1:4], true, nil},
	}
}

// walk pages through a whole list and returns its ids.
func walk[T any](t *testing.T, list func(payment.ListParams) payment.Page[T], id func(T) uuid.UUID, limit int, dir payment.Direction) []uuid.UUID {
	t.Helper()
	var out []uuid.UUID
	p := payment.ListParams{Limit: limit, Direction: dir}
	for range 1000 {
		page := list(p)
		for _, item := range page.Items {
			out = append(out, id(item))
		}
		if !page.HasMore {
			return out
		}
		if len(page.Items) == 0 {
			t.Fatal("HasMore on an empty page")
		}
		p.Cursor = id(page.Items[len(page.Items)-1])
	}
	t.Fatal("pagination does not end")
	return nil
}

func storeID(s *payment.Store) uuid.UUID       { return s.ID }
func appTokenID(a *payment.AppToken) uuid.UUID { return a.ID }

func testListStores(t *testing.T, s payment.Storage) {
	m, other := createMerchant(t, s, 1), createMerchant(t, s, 2)
	var ids []uuid.UUID
	// Interleave another merchant's stores: they must never show.
	for i := range 25 {
		ids = append(ids, createStore(t, s, m.ID, i).ID)
		if i%5 == 0 {
			createStore(t, s, other.ID, i)
		}
	}
	asc := sortedIDs(ids)
	if !slices.Equal(asc, ids) {
		t.Fatal("payment.NewID did not give ids in creation order")
	}
	list := func(t *testing.T, merchantID uuid.UUID, p payment.ListParams) payment.Page[*payment.Store] {
		t.Helper()
		var page payment.Page[*payment.Store]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListStores(ctx, merchantID, p)
			return err
		})
		return page
	}
	for _, c := range pagingCases(asc) {
		t.Run(c.name, func(t *testing.T) { checkPage(t, c, list(t, m.ID, c.params), storeID) })
	}
	t.Run("Walk", func(t *testing.T) {
		for _, dir := range []payment.Direction{payment.Desc, payment.Asc} {
			want := reversed(asc)
			if dir == payment.Asc {
				want = asc
			}
			got := walk(t, func(p payment.ListParams) payment.Page[*payment.Store] { return list(t, m.ID, p) }, storeID, 7, dir)
			if !slices.Equal(got, want) {
				t.Errorf("walking %s by 7 = %v\nwant %v", dir, got, want)
			}
		}
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, m.ID, payment.ListParams{Limit: 1, Direction: payment.Asc})
		if len(page.Items) != 1 {
			t.Fatalf("got %d items", len(page.Items))
		}
		got, want := page.Items[0], newStore(m.ID, 0)
		checkTime(t, "listed store created_on", got.CreatedOn, want.CreatedOn)
		if got.MerchantID != m.ID || got.Name != want.Name || got.PCICompliant != want.PCICompliant ||
			!reflect.DeepEqual(got.Settings, want.Settings) {
			t.Errorf("listed store = %+v, want the fields of %+v", got, want)
		}
	})
	t.Run("NoStores", func(t *testing.T) {
		empty := createMerchant(t, s, 3)
		checkPage(t, pageCheck{params: payment.ListParams{Limit: 10}, want: []uuid.UUID{}, total: intp(0)},
			list(t, empty.ID, payment.ListParams{Limit: 10}), storeID)
	})
}

func testListAppTokens(t *testing.T, s payment.Storage) {
	m, other := createMerchant(t, s, 1), createMerchant(t, s, 2)
	st, st2 := createStore(t, s, m.ID, 1), createStore(t, s, m.ID, 2)
	otherStore := createStore(t, s, other.ID, 3)
	var active, revoked []uuid.UUID
	for i := range 33 {
		tok := createAppToken(t, s, m.ID, st.ID, i, "shop.example")
		if i%4 == 3 {
			revoked = append(revoked, tok.ID)
		} else {
			active = append(active, tok.ID)
		}
		if i%6 == 0 {
			createAppToken(t, s, m.ID, st2.ID, i)
			createAppToken(t, s, m.ID, uuid.Nil, i)
			createAppToken(t, s, other.ID, otherStore.ID, i)
			createAppToken(t, s, other.ID, uuid.Nil, i)
		}
	}
	for _, id := range revoked {
		revoke(t, s, id, at(200))
	}
	if len(active) < 25 {
		t.Fatalf("only %d active tokens", len(active))
	}
	list := func(t *testing.T, f payment.AppTokenFilter, p payment.ListParams) payment.Page[*payment.AppToken] {
		t.Helper()
		var page payment.Page[*payment.AppToken]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListAppTokens(ctx, f, p)
			return err
		})
		return page
	}
	storeFilter := payment.AppTokenFilter{MerchantID: m.ID, StoreID: st.ID}
	for _, c := range pagingCases(active) {
		t.Run(c.name, func(t *testing.T) { checkPage(t, c, list(t, storeFilter, c.params), appTokenID) })
	}
	t.Run("Walk", func(t *testing.T) {
		got := walk(t, func(p payment.ListParams) payment.Page[*payment.AppToken] { return list(t, storeFilter, p) }, appTokenID, 4, payment.Asc)
		if !slices.Equal(got, active) {
			t.Errorf("walking = %v\nwant %v", got, active)
		}
	})
	t.Run("RevokedCursor", func(t *testing.T) {
		// A client may hold a cursor to a token revoked since: the list
		// goes on from where it was.
		cursor := revoked[2]
		var want []uuid.UUID
		for _, id := range reversed(active) {
			if id.String() < cursor.String() {
				want = append(want, id)
			}
		}
		checkPage(t, pageCheck{want: want[:5], hasMore: len(want) > 5},
			list(t, storeFilter, payment.ListParams{Limit: 5, Cursor: cursor}), appTokenID)
	})
	t.Run("MerchantTokensOnly", func(t *testing.T) {
		page := list(t, payment.AppTokenFilter{MerchantID: m.ID}, payment.ListParams{Limit: 100})
		if len(page.Items) == 0 {
			t.Fatal("no merchant tokens listed")
		}
		for _, tok := range page.Items {
			if tok.MerchantID != m.ID || !tok.IsMerchantToken() {
				t.Errorf("merchant list holds token %s of merchant %s store %s", tok.ID, tok.MerchantID, tok.StoreID)
			}
		}
		if page.TotalHits == nil || *page.TotalHits != len(page.Items) {
			t.Errorf("TotalHits = %v, want %d", page.TotalHits, len(page.Items))
		}
	})
	t.Run("OtherStoreOnly", func(t *testing.T) {
		page := list(t, payment.AppTokenFilter{MerchantID: m.ID, StoreID: st2.ID}, payment.ListParams{Limit: 100})
		if len(page.Items) == 0 {
			t.Fatal("no tokens listed for the second store")
		}
		for _, tok := range page.Items {
			if tok.StoreID != st2.ID {
				t.Errorf("store list holds token %s of store %s", tok.ID, tok.StoreID)
			}
		}
	})
	t.Run("StoreOfAnotherMerchant", func(t *testing.T) {
		// The filter names both: a store id under the wrong merchant
		// matches nothing.
		page := list(t, payment.AppTokenFilter{MerchantID: m.ID, StoreID: otherStore.ID}, payment.ListParams{Limit: 100})
		checkPage(t, pageCheck{want: []uuid.UUID{}, total: intp(0)}, page, appTokenID)
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, storeFilter, payment.ListParams{Limit: 1, Direction: payment.Asc})
		if len(page.Items) != 1 {
			t.Fatalf("got %d items", len(page.Items))
		}
		want := newAppToken(m.ID, st.ID, 0, "shop.example")
		want.ID, want.CreatorID, want.JWT = page.Items[0].ID, page.Items[0].CreatorID, page.Items[0].JWT
		checkAppToken(t, page.Items[0], want, nil)
	})
}

func sameSet(got, want []string) bool {
	g, w := map[string]bool{}, map[string]bool{}
	for _, d := range got {
		g[d] = true
	}
	for _, d := range want {
		w[d] = true
	}
	return reflect.DeepEqual(g, w)
}

func testActiveDomains(t *testing.T, s payment.Storage) {
	domains := func(t *testing.T) []string {
		t.Helper()
		var ds []string
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			ds, err = tx.ActiveDomains(ctx)
			return err
		})
		return ds
	}
	if ds := domains(t); len(ds) != 0 {
		t.Errorf("ActiveDomains of an empty store = %v", ds)
	}
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	createAppToken(t, s, m.ID, st.ID, 1, "a.example", "b.example:8443")
	gone := createAppToken(t, s, m.ID, st.ID, 2, "a.example", "gone.example")
	createAppToken(t, s, m.ID, st.ID, 3, "*.wild.example")
	createAppToken(t, s, m.ID, st.ID, 4)
	createAppToken(t, s, m.ID, uuid.Nil, 5)
	want := []string{"a.example", "b.example:8443", "gone.example", "*.wild.example"}
	if ds := domains(t); !sameSet(ds, want) {
		t.Errorf("ActiveDomains = %v, want %v", ds, want)
	}
	revoke(t, s, gone.ID, at(10))
	// a.example stays: another active token still names it.
	want = []string{"a.example", "b.example:8443", "*.wild.example"}
	if ds := domains(t); !sameSet(ds, want) {
		t.Errorf("after revoking, ActiveDomains = %v, want %v", ds, want)
	}
}

func take(t *testing.T, s payment.Storage, k payment.QuotaKey, limit int) bool {
	t.Helper()
	var ok bool
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		ok, err = tx.TakeQuota(ctx, k, limit)
		return err
	})
	return ok
}

func release(t *testing.T, s payment.Storage, k payment.QuotaKey) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.ReleaseQuota(ctx, k) })
}

// takeAll takes until the quota refuses and returns how many it took.
func takeAll(t *testing.T, s payment.Storage, k payment.QuotaKey, limit int) int {
	t.Helper()
	n := 0
	for take(t, s, k, limit) {
		n++
		if n > limit+1 {
			t.Fatalf("quota %v took %d units with limit %d", k, n, limit)
		}
	}
	return n
}

func testQuota(t *testing.T, s payment.Storage) {
	key := payment.QuotaKey{Resource: "app_token", Scope: "store:1", Period: ""}
	t.Run("LimitRespected", func(t *testing.T) {
		for i := range 3 {
			if !take(t, s, key, 3) {
				t.Fatalf("take %d of 3 refused", i+1)
			}
		}
		for range 2 {
			if take(t, s, key, 3) {
				t.Fatal("took a 4th unit with limit 3")
			}
		}
	})
	t.Run("ReleaseFreesOnePlace", func(t *testing.T) {
		release(t, s, key)
		// The refused takes above counted nothing: exactly one place.
		if got := takeAll(t, s, key, 3); got != 1 {
			t.Errorf("after one release, %d units could be taken, want 1", got)
		}
	})
	t.Run("HigherLimit", func(t *testing.T) {
		// The limit is the caller's: configuration may raise it.
		if got := takeAll(t, s, key, 5); got != 2 {
			t.Errorf("with limit 5 after 3 used, took %d, want 2", got)
		}
	})
	t.Run("Independent", func(t *testing.T) {
		for _, k := range []payment.QuotaKey{
			{Resource: key.Resource, Scope: key.Scope, Period: "2025-01-31"},
			{Resource: key.Resource, Scope: key.Scope, Period: "2025-02-01"},
			{Resource: key.Resource, Scope: "store:2", Period: key.Period},
			{Resource: "test_charge", Scope: key.Scope, Period: key.Period},
		} {
			if got := takeAll(t, s, k, 2); got != 2 {
				t.Errorf("quota %+v: took %d, want 2", k, got)
			}
		}
		// ... and taking them did not touch the first key.
		if take(t, s, key, 5) {
			t.Error("first key gained a place")
		}
	})
	t.Run("ReleaseUnusedDoesNotGoNegative", func(t *testing.T) {
		k := payment.QuotaKey{Resource: "webhook", Scope: "store:3"}
		release(t, s, k)
		release(t, s, k)
		if got := takeAll(t, s, k, 2); got != 2 {
			t.Errorf("after releasing an unused quota, took %d with limit 2, want 2", got)
		}
		release(t, s, k)
		release(t, s, k)
		release(t, s, k)
		if got := takeAll(t, s, k, 2); got != 2 {
			t.Errorf("after releasing more than taken, took %d with limit 2, want 2", got)
		}
	})
	t.Run("LimitZero", func(t *testing.T) {
		if take(t, s, payment.QuotaKey{Resource: "none", Scope: "store:4"}, 0) {
			t.Error("took a unit with limit 0")
		}
	})
	t.Run("SeveralInOneTransaction", func(t *testing.T) {
		k := payment.QuotaKey{Resource: "app_token", Scope: "store:5"}
		var got []bool
		update(t, s, func(ctx context.Context, tx payment.Tx) error {
			for range 4 {
				ok, err := tx.TakeQuota(ctx, k, 3)
				if err != nil {
					return err
				}
				got = append(got, ok)
			}
			return nil
		})
		if want := []bool{true, true, true, false}; !slices.Equal(got, want) {
			t.Errorf("takes in one transaction = %v, want %v", got, want)
		}
	})
}

func testQuotaConcurrent(t *testing.T, s payment.Storage) {
	const limit, workers = 20, 50
	key := payment.QuotaKey{Resource: "app_token", Scope: "store:concurrent"}
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for range limit - 1 {
			if ok, err := tx.TakeQuota(ctx, key, limit); err != nil || !ok {
				return fmt.Errorf("setting up: ok=%v err=%v", ok, err)
			}
		}
		return nil
	})
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		granted int
		errs    []error
	)
	start := make(chan struct{})
	for range workers {
		wg.Go(func() {
			<-start
			var ok bool
			err := s.Update(context.Background(), func(tx payment.Tx) error {
				var err error
				ok, err = tx.TakeQuota(context.Background(), key, limit)
				return err
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			} else if ok {
				granted++
			}
		})
	}
	close(start)
	wg.Wait()
	if len(errs) > 0 {
		t.Errorf("%d of %d concurrent takes failed, first: %v", len(errs), workers, errs[0])
	}
	if granted != 1 {
		t.Errorf("%d of %d concurrent takes at %d/%d succeeded, want exactly 1", granted, workers, limit-1, limit)
	}
	if take(t, s, key, limit) {
		t.Error("a unit was left after the concurrent takes")
	}
}

var errRollback = errors.New("storagetest: roll back")

func testUpdateRollsBack(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	kept := createAppToken(t, s, m.ID, st.ID, 1, "kept.example")
	key := payment.QuotaKey{Resource: "app_token", Scope: "store:" + st.ID.String()}
	if !take(t, s, key, 2) {
		t.Fatal("setting up the quota failed")
	}

	m2 := newMerchant(2)
	st2 := newStore(m2.ID, 2)
	u := &payment.User{ID: payment.NewID(), MerchantID: m2.ID, Email: "rolled@kessai.test", PasswordHash: []byte("h"), CreatedOn: at(2)}
	tok := newAppToken(m2.ID, st2.ID, 2, "rolled.example")
	err := s.Update(t.Context(), func(tx payment.Tx) error {
		ctx := t.Context()
		for _, step := range []func() error{
			func() error { return tx.CreateMerchant(ctx, m2) },
			func() error { return tx.CreateUser(ctx, u) },
			func() error { return tx.CreateStore(ctx, st2) },
			func() error { return tx.CreateAppToken(ctx, tok) },
			func() error { return tx.RevokeAppToken(ctx, kept.ID, at(3)) },
			func() error { return tx.SetUserPassword(ctx, u.ID, []byte("other")) },
			func() error {
				ok, err := tx.TakeQuota(ctx, key, 2)
				if err == nil && !ok {
					err = errors.New("quota refused inside the transaction")
				}
				return err
			},
			func() error { return tx.ReleaseQuota(ctx, payment.QuotaKey{Resource: "app_token", Scope: "other"}) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		// What was written is visible inside the transaction.
		if _, err := tx.Store(ctx, st2.ID); err != nil {
			return fmt.Errorf("own write not visible: %w", err)
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("Update returned %v, want the function's error", err)
	}

	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		if _, err := tx.Merchant(ctx, m2.ID); !payment.IsNotFound(err) {
			t.Errorf("merchant after rollback: %v, want NOT_FOUND", err)
		}
		if _, err := tx.UserByEmail(ctx, u.Email); !payment.IsNotFound(err) {
			t.Errorf("user after rollback: %v, want NOT_FOUND", err)
		}
		if _, err := tx.Store(ctx, st2.ID); !payment.IsNotFound(err) {
			t.Errorf("store after rollback: %v, want NOT_FOUND", err)
		}
		if _, err := tx.AppToken(ctx, tok.ID); !payment.IsNotFound(err) {
			t.Errorf("app token after rollback: %v, want NOT_FOUND", err)
		}
		got, err := tx.AppToken(ctx, kept.ID)
		if err != nil {
			return err
		}
		if !got.Active() {
			t.Error("a revocation survived the rollback")
		}
		n, err := tx.CountMerchants(ctx)
		if err == nil && n != 1 {
			t.Errorf("CountMerchants after rollback = %d, want 1", n)
		}
		ds, err := tx.ActiveDomains(ctx)
		if err == nil && !sameSet(ds, []string{"kept.example"}) {
			t.Errorf("ActiveDomains after rollback = %v", ds)
		}
		return err
	})
	if got := takeAll(t, s, key, 2); got != 1 {
		t.Errorf("after rollback the quota had %d places, want 1", got)
	}

	t.Run("DomainError", func(t *testing.T) {
		want := payment.Invalid("name", payment.ReasonRequired)
		m3 := newMerchant(3)
		err := s.Update(t.Context(), func(tx payment.Tx) error {
			if err := tx.CreateMerchant(t.Context(), m3); err != nil {
				return err
			}
			return want
		})
		var got *payment.Error
		if !errors.As(err, &got) || got != want {
			t.Errorf("Update returned %v, want the *payment.Error itself", err)
		}
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			if _, err := tx.Merchant(ctx, m3.ID); !payment.IsNotFound(err) {
				t.Errorf("merchant after rollback: %v, want NOT_FOUND", err)
			}
			return nil
		})
	})
	t.Run("Commits", func(t *testing.T) {
		m4 := newMerchant(4)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.CreateMerchant(ctx, m4) })
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.Merchant(ctx, m4.ID)
			return err
		})
	})
}

func testViewCannotWrite(t *testing.T, s payment.Storage) {
	m := createMerchant(t, s, 1)
	st := createStore(t, s, m.ID, 1)
	tok := createAppToken(t, s, m.ID, st.ID, 1)
	key := payment.QuotaKey{Resource: "app_token", Scope: "view"}
	writes := []struct {
		name  string
		write func(ctx context.Context, tx payment.Tx) error
	}{
		{"CreateMerchant", func(ctx context.Context, tx payment.Tx) error { return tx.CreateMerchant(ctx, newMerchant(2)) }},
		{"CreateStore", func(ctx context.Context, tx payment.Tx) error { return tx.CreateStore(ctx, newStore(m.ID, 2)) }},
		{"CreateAppToken", func(ctx context.Context, tx payment.Tx) error {
			return tx.CreateAppToken(ctx, newAppToken(m.ID, st.ID, 2))
		}},
		{"RevokeAppToken", func(ctx context.Context, tx payment.Tx) error { return tx.RevokeAppToken(ctx, tok.ID, at(5)) }},
		{"TakeQuota", func(ctx context.Context, tx payment.Tx) error {
			_, err := tx.TakeQuota(ctx, key, 1)
			return err
		}},
	}
	for _, w := range writes {
		t.Run(w.name, func(t *testing.T) {
			if err := s.View(t.Context(), func(tx payment.Tx) error { return w.write(t.Context(), tx) }); err == nil {
				t.Errorf("%s inside View succeeded, want an error", w.name)
			}
		})
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		n, err := tx.CountMerchants(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			t.Errorf("View wrote: %d merchants, want 1", n)
		}
		got, err := tx.AppToken(ctx, tok.ID)
		if err != nil {
			return err
		}
		if !got.Active() {
			t.Error("View revoked a token")
		}
		return nil
	})
	if !take(t, s, key, 1) {
		t.Error("View took a quota unit")
	}
}
