package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// chargeLine and refundLine are ledger lines with every field set, as the
// domain writes them for a charge and for a refund.
func chargeLine(ch *payment.Charge, i int) *payment.LedgerEntry {
	return &payment.LedgerEntry{
		ResourceID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, ChargeID: ch.ID,
		Type: payment.LedgerCharge, Status: string(payment.ChargeAuthorized), Amount: 9_999_999_999 - int64(i),
		Currency: ch.Currency, Mode: ch.Mode, Metadata: fullMetadata(i), CreatedOn: at(i), UpdatedOn: at(i + 1),
	}
}

func refundLine(r *payment.Refund, i int) *payment.LedgerEntry {
	return &payment.LedgerEntry{
		ResourceID: r.ID, StoreID: r.StoreID, MerchantID: r.MerchantID, ChargeID: r.ChargeID,
		Type: payment.LedgerRefund, Status: string(payment.OperationPending), Amount: 500 + int64(i),
		Currency: r.Currency, Mode: r.Mode, Metadata: fullMetadata(i), CreatedOn: at(i), UpdatedOn: at(i + 2),
	}
}

// ledgerFixed are the fields of a ledger line that a later PutLedgerEntry
// of the same resource does not change: the domain writes them once, from
// the resource, and only ever puts the line again with a new status,
// amount (a charge's charged amount), metadata and update time. What an
// engine does when a later put changes a fixed field is left open.
var ledgerFixed = []string{"ResourceID", "StoreID", "MerchantID", "ChargeID", "Type", "Currency", "Mode", "CreatedOn"}

func putLines(t *testing.T, s payment.Storage, es ...*payment.LedgerEntry) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, e := range es {
			if err := tx.PutLedgerEntry(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

func ledgerID(e *payment.LedgerEntry) uuid.UUID { return e.ResourceID }

func listLedger(t *testing.T, s payment.Storage, f payment.LedgerFilter, p payment.ListParams) payment.Page[*payment.LedgerEntry] {
	t.Helper()
	var page payment.Page[*payment.LedgerEntry]
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		page, err = tx.ListLedger(ctx, f, p)
		return err
	})
	return page
}

// testLedger checks PutLedgerEntry's round trip (through ListLedger, the
// only reader) and that a second put of the same resource updates its line
// instead of adding one.
func testLedger(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 2, w.st)[0]
	r := newRefund(chs[0], 1)
	createRefunds(t, s, r)
	line, rline, other := chargeLine(chs[0], 1), refundLine(r, 2), chargeLine(chs[1], 3)
	requireNoZeroFields(t, line)
	requireNoZeroFields(t, rline)
	putLines(t, s, line, rline, other)
	store := payment.LedgerFilter{MerchantID: w.m.ID, StoreID: w.st.ID}
	check := func(t *testing.T, want ...*payment.LedgerEntry) {
		t.Helper()
		page := listLedger(t, s, store, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if len(page.Items) != len(want) {
			t.Fatalf("ListLedger holds %d lines, want %d", len(page.Items), len(want))
		}
		for i, got := range page.Items {
			checkSame(t, got, want[i])
		}
	}
	// In id order: the refund was made after both charges.
	check(t, line, other, rline)

	t.Run("PutAgain", func(t *testing.T) {
		changed := *line
		changed.Status, changed.Amount, changed.UpdatedOn = string(payment.ChargeSuccessful), 1, at(700)
		changed.Metadata = payment.Metadata{"order_id": json.Number("7"), "captured": true}
		requireAllChanged(t, line, &changed, ledgerFixed...)
		changedRefund := *rline
		changedRefund.Status, changedRefund.Amount, changedRefund.UpdatedOn = string(payment.OperationFailed), 2, at(701)
		changedRefund.Metadata = payment.Metadata{}
		putLines(t, s, &changed, &changedRefund)
		check(t, &changed, other, &changedRefund)
	})
}

// testListLedger checks every LedgerFilter field alone and combined: the
// scope as for charges, Status, Type and Mode exactly, and From/To bounding
// CreatedOn inclusively at the microsecond, as for charges.
func testListLedger(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	chs := chargesOf(t, s, 18, w.st, w.st2, w.otherSt)
	// The search reads the lines' charges: some get an e-mail and a card
	// of their own.
	chargeOf := map[uuid.UUID]*payment.Charge{}
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for k := range chs {
			for i, ch := range chs[k] {
				chargeOf[ch.ID] = ch
				if i%3 != 1 {
					continue
				}
				ch.Email, ch.CardLastFour = fmt.Sprintf("Buyer%d@Example.COM", i%2), "0005"
				if err := tx.UpdateCharge(ctx, ch); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var all, inStore []*payment.LedgerEntry
	statuses := []string{"pending", "authorized", "successful", "failed"}
	var refunds []*payment.Refund
	for k := range chs {
		for i, ch := range chs[k] {
			ch.Mode = []payment.Mode{payment.ModeTest, payment.ModeLive}[i%2]
			e := chargeLine(ch, 100*i+k)
			e.Status = statuses[i%4]
			e.Metadata = chargeMetadata(i)
			all = append(all, e)
			if k == 0 {
				inStore = append(inStore, e)
			}
			if i%2 == 0 {
				r := newRefund(ch, 100*i+k+50)
				refunds = append(refunds, r)
				re := refundLine(r, 100*i+k+50)
				re.Status = []string{"pending", "successful", "failed"}[i%3]
				all = append(all, re)
				if k == 0 {
					inStore = append(inStore, re)
				}
			}
		}
	}
	createRefunds(t, s, refunds...)
	// Lines are put in id order, which is their creation order; all is
	// kept in id order for the comparisons.
	sortByID(all, ledgerID)
	sortByID(inStore, ledgerID)
	putLines(t, s, all...)

	list := func(t *testing.T, f payment.LedgerFilter, p payment.ListParams) payment.Page[*payment.LedgerEntry] {
		t.Helper()
		return listLedger(t, s, f, p)
	}
	type rule = func(*payment.LedgerEntry) bool
	inScope := func(merchantID, storeID uuid.UUID) rule {
		return func(e *payment.LedgerEntry) bool {
			return e.MerchantID == merchantID && (storeID == uuid.Nil || e.StoreID == storeID)
		}
	}
	and := allOf[*payment.LedgerEntry]
	store := payment.LedgerFilter{MerchantID: w.m.ID, StoreID: w.st.ID}
	inStoreRule := inScope(w.m.ID, w.st.ID)
	with := func(change func(f *payment.LedgerFilter)) payment.LedgerFilter {
		f := store
		change(&f)
		return f
	}
	edge := inStore[8] // created at(800): nanoseconds to truncate
	stored := edge.CreatedOn.Truncate(time.Microsecond)
	after, before := stored.Add(time.Microsecond), stored.Add(-time.Microsecond)
	type tc = filterCase[payment.LedgerFilter, *payment.LedgerEntry]
	cases := []tc{
		{name: "Store", filter: store, match: inStoreRule},
		{name: "Merchant", filter: payment.LedgerFilter{MerchantID: w.m.ID}, match: inScope(w.m.ID, uuid.Nil)},
		{name: "SecondStore", filter: payment.LedgerFilter{MerchantID: w.m.ID, StoreID: w.st2.ID}, match: inScope(w.m.ID, w.st2.ID)},
		{name: "OtherMerchant", filter: payment.LedgerFilter{MerchantID: w.other.ID}, match: inScope(w.other.ID, uuid.Nil)},
		{name: "StoreOfAnotherMerchant", filter: payment.LedgerFilter{MerchantID: w.m.ID, StoreID: w.otherSt.ID},
			match: func(*payment.LedgerEntry) bool { return false }, none: true},
		{name: "TypeCharge", filter: with(func(f *payment.LedgerFilter) { f.Type = payment.LedgerCharge }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.Type == payment.LedgerCharge })},
		{name: "TypeRefund", filter: with(func(f *payment.LedgerFilter) { f.Type = payment.LedgerRefund }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.Type == payment.LedgerRefund })},
		{name: "ModeTest", filter: with(func(f *payment.LedgerFilter) { f.Mode = payment.ModeTest }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.Mode == payment.ModeTest })},
		{name: "ModeLive", filter: with(func(f *payment.LedgerFilter) { f.Mode = payment.ModeLive }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.Mode == payment.ModeLive })},
		{name: "FromInclusive", filter: with(func(f *payment.LedgerFilter) { f.From = timep(edge.CreatedOn) }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return within(e.CreatedOn, &edge.CreatedOn, nil) })},
		{name: "FromMicrosecondAfter", filter: with(func(f *payment.LedgerFilter) { f.From = &after }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return within(e.CreatedOn, &after, nil) })},
		{name: "ToInclusive", filter: with(func(f *payment.LedgerFilter) { f.To = timep(edge.CreatedOn.UTC()) }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return within(e.CreatedOn, nil, &edge.CreatedOn) })},
		{name: "ToMicrosecondBefore", filter: with(func(f *payment.LedgerFilter) { f.To = &before }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return within(e.CreatedOn, nil, &before) })},
		{name: "FromToOneInstant", filter: with(func(f *payment.LedgerFilter) { f.From, f.To = timep(edge.CreatedOn), timep(edge.CreatedOn) }),
			match: func(e *payment.LedgerEntry) bool { return e.ResourceID == edge.ResourceID }},
		{name: "Combined", filter: with(func(f *payment.LedgerFilter) {
			f.Type, f.Status, f.Mode, f.From = payment.LedgerRefund, "pending", payment.ModeTest, timep(inStore[2].CreatedOn)
		}), match: and(inStoreRule, func(e *payment.LedgerEntry) bool {
			return e.Type == payment.LedgerRefund && e.Status == "pending" && e.Mode == payment.ModeTest &&
				within(e.CreatedOn, &inStore[2].CreatedOn, nil)
		})},
		{name: "CombinedMerchantWide", filter: payment.LedgerFilter{MerchantID: w.m.ID, Type: payment.LedgerCharge, Status: "failed"},
			match: and(inScope(w.m.ID, uuid.Nil), func(e *payment.LedgerEntry) bool {
				return e.Type == payment.LedgerCharge && e.Status == "failed"
			})},
		{name: "StatusOfNoType", filter: with(func(f *payment.LedgerFilter) { f.Type, f.Status = payment.LedgerRefund, "authorized" }),
			match: func(*payment.LedgerEntry) bool { return false }, none: true},
	}
	for _, st := range statuses {
		cases = append(cases, tc{name: "Status" + st, filter: with(func(f *payment.LedgerFilter) { f.Status = st }),
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.Status == st })})
	}
	// Search: a line's resource or charge id, or its charge's e-mail (a
	// part of it, ASCII letters in any case) or last four.
	for _, c := range []struct {
		name, q string
		none    bool
	}{
		{"SearchChargeID", chs[0][4].ID.String(), false},
		{"SearchRefundID", refunds[2].ID.String(), false},
		{"SearchEmail", "buyer1@example.com", false},
		{"SearchEmailPart", "EXAMPLE.com", false},
		{"SearchLastFour", "0005", false},
		{"SearchOtherStoresCharge", chs[1][4].ID.String(), true},
		{"SearchNothing", "%", true},
	} {
		cases = append(cases, tc{name: c.name, filter: with(func(f *payment.LedgerFilter) { f.Search = c.q }), none: c.none,
			match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.MatchesSearch(c.q, chargeOf[e.ChargeID]) })})
	}
	// Metadata, as payment.Metadata.Matches.
	for _, kv := range [][2]string{{"order_id", "123"}, {"price", "1.50"}, {"paid", "true"}, {"big", "12345678901234567890"}} {
		cases = append(cases, tc{name: "Metadata" + kv[0] + kv[1], filter: with(func(f *payment.LedgerFilter) {
			f.MetadataKey, f.MetadataValue = kv[0], kv[1]
		}), match: and(inStoreRule, func(e *payment.LedgerEntry) bool { return e.Metadata.Matches(kv[0], kv[1]) })})
	}
	cases = append(cases, tc{name: "CombinedSearchMetadataType", filter: with(func(f *payment.LedgerFilter) {
		f.Search, f.MetadataKey, f.MetadataValue, f.Type = "0005", "order_id", "123", payment.LedgerCharge
	}), match: and(inStoreRule, func(e *payment.LedgerEntry) bool {
		return e.Type == payment.LedgerCharge && e.MatchesSearch("0005", chargeOf[e.ChargeID]) && e.Metadata.Matches("order_id", "123")
	})})
	checkFilters(t, all, ledgerID, list, cases)

	t.Run("Paging", func(t *testing.T) {
		var asc []uuid.UUID
		for _, e := range inStore {
			asc = append(asc, e.ResourceID)
		}
		checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.LedgerEntry] { return list(t, store, p) }, ledgerID)
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, store, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if len(page.Items) != len(inStore) {
			t.Fatalf("got %d lines, want %d", len(page.Items), len(inStore))
		}
		for i, got := range page.Items {
			checkSame(t, got, inStore[i])
		}
	})
}
