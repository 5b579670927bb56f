// Package storagetest is the conformance suite every storage engine of
// Kessai must pass (SQLite and PostgreSQL). An engine's own tests
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
// The suite checks what package payment relies on and cannot check itself,
// for every method of payment.Tx: that every field of every stored type
// comes back as it was written (times to the microsecond, in UTC; metadata
// numbers as their exact text), after creation and after an update (fixtures
// are checked by reflection to set every field, so a field added to the
// domain later fails the suite until every engine stores it); that missing
// rows are NOT_FOUND; what each list filter selects and how lists page; that
// revoked app tokens leave lists and the CORS domain set; the duplicate-charge
// and refund rules' queries; the work queue (claims, leases, per-item
// attempts, concurrent claimants); which approval of a resource is the
// latest; which webhooks hear a store's events, when a webhook's URL is
// taken, that deleting a webhook deletes its deliveries, and the order of
// the event feed; what the subscription list's filters and search select
// (no character of a search a wildcard), a subscription's payments in
// order, and that rescheduling work keeps its attempts and claim; that
// quotas are atomic under concurrency; that Update is all or nothing and
// that View cannot write; that concurrent Updates stay transactions of their
// own if the engine shares one COMMIT among them (group commit); that the
// rules decided inside an Update (the duplicate-charge rule, refunds within
// the charge, one webhook per URL, one pending cancel, read-modify-writes)
// hold when many Updates decide them at
// once, as several processes on one database would.
//
// Files by area: accounts.go (merchants, users, stores), apptokens.go,
// tokens.go (transaction tokens), charges.go, operations.go (refunds and
// cancels), ledger.go, work.go (the work queue), approvals.go (3-D Secure
// challenges and wallet payments), webhooks.go, events.go (events and
// their deliveries), subscriptions.go (subscriptions, their scheduled
// payments, the charges that pay them, RescheduleWork), quotas.go and
// transactions.go
// (NOT_FOUND, duplicate ids, rollback, read-only views), concurrent.go
// (concurrent Updates), concurrentrules.go (rules under concurrency),
// idempotency.go (payment.IdempotencyStore, RunIdempotency), viewone.go
// (payment.OneReadViewer, RunOneReadViews), console.go (the merchant
// console: users by id, sessions, password resets, store settings, the
// dashboard's counts, and their rules under concurrency; RunConsole runs
// them alone); compare.go holds the reflection helpers.
package storagetest

import (
	"context"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Run runs the conformance suite. open must return a new, empty storage
// each time it is called and arrange (with t.Cleanup) for it to be closed.
// The areas run in parallel, each on a storage of its own.
func Run(t *testing.T, open func(t *testing.T) payment.Storage) {
	areas := []area{
		{"Merchants", testMerchants},
		{"Users", testUsers},
		{"Stores", testStores},
		{"AppTokens", testAppTokens},
		{"NotFound", testNotFound},
		{"DuplicateIDs", testDuplicateIDs},
		{"ListStores", testListStores},
		{"ListAppTokens", testListAppTokens},
		{"ActiveDomains", testActiveDomains},
		{"Quota", testQuota},
		{"QuotaConcurrent", testQuotaConcurrent},
		{"UpdateRollsBack", testUpdateRollsBack},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ViewCannotWrite", testViewCannotWrite},
		{"Tokens", testTokens},
		{"TokenShapes", testTokenShapes},
		{"ListTokens", testListTokens},
		{"Charges", testCharges},
		{"ListCharges", testListCharges},
		{"RecentCharge", testRecentCharge},
		{"Refunds", testRefunds},
		{"ListRefunds", testListRefunds},
		{"RefundedAmount", testRefundedAmount},
		{"PendingRefundFor", testPendingRefundFor},
		{"Cancels", testCancels},
		{"RefundAndCancelScope", testRefundAndCancelScope},
		{"ListCancels", testListCancels},
		{"PendingCancelFor", testPendingCancelFor},
		{"Ledger", testLedger},
		{"ListLedger", testListLedger},
		{"WorkQueue", testWorkQueue},
		{"ClaimWork", testClaimWork},
		{"WorkLeaseExpiry", testWorkLeaseExpiry},
		{"WorkAttempts", testWorkAttempts},
		{"WorkConcurrentClaims", testWorkConcurrentClaims},
		{"WorkRollback", testWorkRollback},
		{"WorkQueueStats", testWorkQueueStats},
		{"Approvals", testApprovals},
		{"ApprovalFor", testApprovalFor},
		{"ApprovalRollback", testApprovalRollback},
		{"TransferLedger", testTransferLedger},
		{"Webhooks", testWebhooks},
		{"ListWebhooks", testListWebhooks},
		{"WebhookURLTaken", testWebhookURLTaken},
		{"ActiveWebhooks", testActiveWebhooks},
		{"Events", testEvents},
		{"ListEvents", testListEvents},
		{"Deliveries", testDeliveries},
		{"ListDeliveries", testListDeliveries},
		{"WebhookRollback", testWebhookRollback},
		{"Subscriptions", testSubscriptions},
		{"ListSubscriptions", testListSubscriptions},
		{"ListScheduledPayments", testListScheduledPayments},
		{"SubscriptionCharges", testSubscriptionCharges},
		{"RescheduleWork", testRescheduleWork},
		{"SubscriptionRollback", testSubscriptionRollback},
		{"ConcurrentDuplicateCharges", testConcurrentDuplicateCharges},
		{"ConcurrentRefunds", testConcurrentRefunds},
		{"ConcurrentReadModifyWrite", testConcurrentReadModifyWrite},
		{"ConcurrentWebhookURLs", testConcurrentWebhookURLs},
		{"ConcurrentPendingCancels", testConcurrentPendingCancels},
		{"SnapshotWithinUpdate", testSnapshotWithinUpdate},
	}
	runAreas(t, open, append(areas, consoleAreas()...))
}

// area is one part of the suite, run on a storage of its own.
type area struct {
	name string
	test func(*testing.T, payment.Storage)
}

func runAreas(t *testing.T, open func(t *testing.T) payment.Storage, areas []area) {
	for _, a := range areas {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			a.test(t, open(t))
		})
	}
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

// emptyIsNil treats a nil and an empty slice alike: engines may give back
// either for an empty list.
func emptyIsNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
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

// pagingCases are the page checks of a list of 25 <= n <= 30 items whose ids in
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

// tenants are two merchants, the first with two stores and the second with
// one: every list of the payment half is checked not to leak across them.
type tenants struct {
	m, other         *payment.Merchant
	st, st2, otherSt *payment.Store
}

func newTenants(t *testing.T, s payment.Storage) tenants {
	t.Helper()
	m, other := createMerchant(t, s, 1), createMerchant(t, s, 2)
	return tenants{
		m: m, other: other,
		st: createStore(t, s, m.ID, 1), st2: createStore(t, s, m.ID, 2), otherSt: createStore(t, s, other.ID, 3),
	}
}

// checkPaging runs the paging cases on a list of at least 25 items whose ids
// in creation order are asc, and walks it whole in both directions.
func checkPaging[T any](t *testing.T, asc []uuid.UUID, list func(t *testing.T, p payment.ListParams) payment.Page[T], id func(T) uuid.UUID) {
	t.Helper()
	if len(asc) < 25 || len(asc) > 30 {
		t.Fatalf("the paging cases need 25 to 30 items, the fixture has %d", len(asc))
	}
	for _, c := range pagingCases(asc) {
		t.Run(c.name, func(t *testing.T) { checkPage(t, c, list(t, c.params), id) })
	}
	t.Run("Walk", func(t *testing.T) {
		for _, dir := range []payment.Direction{payment.Desc, payment.Asc} {
			want := reversed(asc)
			if dir == payment.Asc {
				want = asc
			}
			got := walk(t, func(p payment.ListParams) payment.Page[T] { return list(t, p) }, id, 7, dir)
			if !slices.Equal(got, want) {
				t.Errorf("walking %s by 7 = %v\nwant %v", dir, got, want)
			}
		}
	})
}

// filterCase is one filter of a list and the rule, written in Go, that says
// which rows it selects.
type filterCase[F, T any] struct {
	name   string
	filter F
	match  func(T) bool
	// none: the filter is meant to select nothing. Otherwise a case that
	// selects nothing proves nothing, and fails as a poor fixture.
	none bool
}

// checkFilters lists with each filter and compares the page (limit 100,
// newest first) with the rows of all that the case's rule selects, and
// TotalHits with their number. all must hold every row of the storage, of
// every tenant, in creation order.
func checkFilters[F, T any](t *testing.T, all []T, id func(T) uuid.UUID,
	list func(t *testing.T, f F, p payment.ListParams) payment.Page[T], cases []filterCase[F, T]) {
	t.Helper()
	if len(all) > payment.MaxLimit {
		t.Fatalf("%d rows do not fit one page", len(all))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := []uuid.UUID{}
			for _, item := range all {
				if c.match(item) {
					want = append(want, id(item))
				}
			}
			if len(want) == 0 && !c.none {
				t.Fatal("the case selects no row of the fixture: it proves nothing")
			}
			if len(want) == len(all) {
				t.Fatal("the case selects every row of the fixture: it proves nothing")
			}
			checkPage(t, pageCheck{want: reversed(want), total: intp(len(want))},
				list(t, c.filter, payment.ListParams{Limit: payment.MaxLimit}), id)
		})
	}
}

// within reports whether a time, as an engine stores it (truncated to the
// microsecond), lies within the optional inclusive bounds from and to, also
// truncated to the microsecond.
func within(tm time.Time, from, to *time.Time) bool {
	tm = tm.Truncate(time.Microsecond)
	if from != nil && tm.Before(from.Truncate(time.Microsecond)) {
		return false
	}
	if to != nil && tm.After(to.Truncate(time.Microsecond)) {
		return false
	}
	return true
}

func timep(t time.Time) *time.Time { return &t }

func int64p(v int64) *int64 { return &v }

// sortByID sorts items by id, which is creation order.
func sortByID[T any](items []T, id func(T) uuid.UUID) {
	sort.Slice(items, func(i, j int) bool { return id(items[i]).String() < id(items[j]).String() })
}
