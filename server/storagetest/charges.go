package storagetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// newCharge is a charge on tok with every field set.
func newCharge(tok *payment.TransactionToken, i int) *payment.Charge {
	captureAt := at(i + 3600)
	return &payment.Charge{
		ID: payment.NewID(), StoreID: tok.StoreID, MerchantID: tok.MerchantID, TokenID: tok.ID, TokenType: tok.Type,
		SubscriptionID: payment.NewID(), Mode: tok.Mode, RequestedAmount: 12_000 + int64(i), Currency: "JPY",
		ChargedAmount: int64p(11_000 + int64(i)), Capture: true, CaptureAt: &captureAt,
		CaptureState: payment.CaptureRequested, CaptureAmount: 10_000 + int64(i),
		Descriptor: "KESSAI COFFEE 渋谷", Status: payment.ChargeAuthorized,
		Error:    &payment.PaymentError{Code: payment.ErrCardRejected, Message: "CARD_REJECTED", Detail: "declined by the issuer: \"05\""},
		Metadata: fullMetadata(i),
		ThreeDS: payment.ThreeDSSettings{
			Enabled: true, Mode: "force", RedirectEndpoint: "https://shop.example/3ds", RedirectID: fmt.Sprintf("3ds-%d", i),
			Status: payment.ThreeDSAwaiting, Exempted: true, External: externalThreeDS(i),
			Error: &payment.PaymentError{Code: payment.ErrCardNotEnrolled, Message: "CARD_NOT_ENROLLED", Detail: "no 3-D Secure"},
		},
		RedirectEndpoint: "https://shop.example/return?order=1", MerchantTransactionID: fmt.Sprintf("txn-%d", i),
		IPAddress: "198.51.100.23", PaymentType: tok.PaymentType,
		CardLastFour: tok.Card.LastFour, Email: tok.Email, OnlyDirectCurrency: true, FromBrowser: true,
		CreatedOn: at(i), UpdatedOn: at(i + 2),
	}
}

// chargeFixed are the charge's fields an update never changes: its identity,
// owner, token and mode. UpdateCharge writes every other field.
var chargeFixed = []string{"ID", "StoreID", "MerchantID", "TokenID", "Mode", "CreatedOn"}

// changedCharge is ch with every field but chargeFixed changed.
func changedCharge(ch *payment.Charge) *payment.Charge {
	c := *ch
	captureAt := at(7200)
	c.TokenType, c.SubscriptionID = payment.OneTime, payment.NewID()
	c.RequestedAmount, c.Currency, c.ChargedAmount = 9_999_999_999, "USD", int64p(9_999_999_998)
	c.Capture, c.CaptureAt, c.CaptureState, c.CaptureAmount = false, &captureAt, payment.CaptureDone, 9_999_999_997
	c.Descriptor, c.Status = "CHANGED", payment.ChargeSuccessful
	c.Error = &payment.PaymentError{Code: payment.ErrProcessingError, Message: "PROCESSING_ERROR", Detail: "changed"}
	c.Metadata = payment.Metadata{"order_id": json.Number("42"), "changed": true}
	c.ThreeDS = payment.ThreeDSSettings{
		Enabled: false, Mode: "skip", RedirectEndpoint: "https://other.example/", RedirectID: "other",
		Status: payment.ThreeDSSuccessful, Exempted: false, External: changedExternalThreeDS(),
		Error: &payment.PaymentError{Code: payment.ErrThreeDSNotCompleted, Message: "THREE_DS_COULD_NOT_BE_COMPLETED", Detail: "changed"},
	}
	c.RedirectEndpoint, c.MerchantTransactionID, c.IPAddress = "https://other.example/back", "txn-changed", "192.0.2.99"
	c.PaymentType = payment.PaymentTypeOnline
	c.CardLastFour, c.Email, c.UpdatedOn = "0000", "changed@example.com", at(7201)
	c.OnlyDirectCurrency, c.FromBrowser = false, false
	return &c
}

func createCharges(t *testing.T, s payment.Storage, chs ...*payment.Charge) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, ch := range chs {
			if err := tx.CreateCharge(ctx, ch); err != nil {
				return err
			}
		}
		return nil
	})
}

func readCharge(t *testing.T, s payment.Storage, id uuid.UUID) *payment.Charge {
	t.Helper()
	var ch *payment.Charge
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		ch, err = tx.Charge(ctx, id)
		return err
	})
	return ch
}

func chargeID(ch *payment.Charge) uuid.UUID { return ch.ID }

func testCharges(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	// A charge pays a scheduled payment, which must exist.
	_, pay, pay2 := subscriptionPayments(t, s, tok)
	ch, other := newCharge(tok, 1), newCharge(tok, 2)
	ch.PaymentID = pay.ID
	requireNoZeroFields(t, ch)
	createCharges(t, s, ch, other)
	checkSame(t, readCharge(t, s, ch.ID), ch)

	t.Run("Update", func(t *testing.T) {
		changed := changedCharge(ch)
		changed.PaymentID = pay2.ID
		requireAllChanged(t, ch, changed, chargeFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, changed) })
		checkSame(t, readCharge(t, s, ch.ID), changed)
		checkSame(t, readCharge(t, s, other.ID), other)
	})
	t.Run("UpdateClears", func(t *testing.T) {
		// A failed capture takes the charged amount away; a charge
		// without an error, a subscription or a capture time has none.
		cleared := changedCharge(ch)
		cleared.ChargedAmount, cleared.CaptureAt, cleared.Error = nil, nil, nil
		cleared.SubscriptionID, cleared.CaptureState, cleared.Metadata = uuid.Nil, payment.CaptureNone, nil
		cleared.PaymentID = uuid.Nil
		cleared.ThreeDS.Error, cleared.ThreeDS.External = nil, nil
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, cleared) })
		checkSame(t, readCharge(t, s, ch.ID), cleared)
	})
	t.Run("PaymentTypeAsWritten", func(t *testing.T) {
		// The payment type is stored as it is: empty (a charge from before
		// wallets, a card charge) stays empty, on creation and on update.
		for _, pt := range []string{"", payment.PaymentTypeOnline, payment.PaymentTypeQRMerchant, payment.PaymentTypeCard} {
			created := newCharge(tok, 3)
			created.PaymentType = pt
			createCharges(t, s, created)
			if got := readCharge(t, s, created.ID); got.PaymentType != pt {
				t.Errorf("created with PaymentType %q, read back %q", pt, got.PaymentType)
			}
			updated := changedCharge(ch)
			updated.PaymentType = pt
			update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, updated) })
			if got := readCharge(t, s, ch.ID); got.PaymentType != pt {
				t.Errorf("updated to PaymentType %q, read back %q", pt, got.PaymentType)
			}
		}
	})
}

// chargeStatuses are every status a charge can have.
var chargeStatuses = []payment.ChargeStatus{
	payment.ChargePending, payment.ChargeAwaiting, payment.ChargeAuthorized, payment.ChargeSuccessful,
	payment.ChargeFailed, payment.ChargeError, payment.ChargeCanceled,
}

// chargeMetadata gives the charges of the list test metadata that the
// metadata filter must tell apart: the same text as a string and as a
// number, booleans and the string "true", two integers beyond float64 that
// a float comparison would confuse, a decimal with and without a trailing
// zero, a key with a dot and an array.
func chargeMetadata(i int) payment.Metadata {
	md := payment.Metadata{"i": json.Number(fmt.Sprint(i))}
	switch i % 6 {
	case 0:
		md["order_id"], md["paid"], md["shop.order"] = "123", true, "A-1"
	case 1:
		md["order_id"], md["paid"] = json.Number("123"), false
	case 2:
		md["order_id"], md["big"], md["price"] = "1234", json.Number("12345678901234567890"), json.Number("1.50")
	case 3:
		md["big"], md["price"], md["paid"] = json.Number("12345678901234567891"), json.Number("1.5"), "true"
	case 4:
		md["tags"], md["big"] = []any{"coffee"}, "12345678901234567890"
	}
	return md
}

// testListCharges checks every ChargeFilter field alone and combined. The
// semantics, as package payment and the HTTP API use them:
//
//   - MerchantID is always set and StoreID narrows to one store; a store of
//     another merchant selects nothing.
//   - Mode, Status, Currency, TokenID, LastFour (CardLastFour) and Email
//     match exactly.
//   - From and To bound CreatedOn, both inclusive, compared at the
//     microsecond (a bound is truncated to the microsecond like a stored
//     time); they are instants, whatever their zone.
//   - AmountFrom and AmountTo bound RequestedAmount, both inclusive.
//   - MetadataKey/MetadataValue select the charges whose metadata
//     payment.Metadata.Matches(key, value): a string equal to the value, a
//     number whose text (as written, digits and trailing zeros included)
//     is the value, true/false for booleans; arrays never match.
//   - Cardholder, ExpMonth, ExpYear, CardBIN and Phone read the charge's
//     token as it is now: payment.ChargeFilter.MatchesToken.
func testListCharges(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	var toks []*payment.TransactionToken
	for i := range 3 {
		toks = append(toks, newToken(w.st, i))
	}
	tok2, foreignTok := newToken(w.st2, 3), newToken(w.otherSt, 4)
	// The card and phone filters read the charge's token; the other
	// store's and merchant's tokens keep newToken's card, like toks[0]'s.
	toks[0].Card.Billing.PhoneNumber = &payment.Phone{CountryCode: 81, LocalNumber: "03-1234-5678"}
	toks[1].Card.Cardholder, toks[1].Card.ExpMonth, toks[1].Card.ExpYear, toks[1].Card.BIN = "Hanako Sato", 3, 2032, "555555"
	toks[1].Card.Billing.PhoneNumber = nil
	toks[2].Card.Cardholder, toks[2].Card.ExpYear = "taro yamada", 2032
	toks[2].Card.Billing.PhoneNumber = &payment.Phone{CountryCode: 1, LocalNumber: "(202) 555-0123"}
	createTokens(t, s, append(toks, tok2, foreignTok)...)
	tokenOf := map[uuid.UUID]*payment.TransactionToken{}
	for _, tok := range append(toks, tok2, foreignTok) {
		tokenOf[tok.ID] = tok
	}
	lastFours := []string{"4242", "0005", "1111", "4444"}
	currencies := []string{"JPY", "USD", "EUR"}
	var all, inStore []*payment.Charge
	for i := range 30 {
		ch := newCharge(toks[i%3], i*10)
		ch.Mode = []payment.Mode{payment.ModeTest, payment.ModeLive}[i%2]
		ch.Status = chargeStatuses[i%7]
		ch.Currency = currencies[(i/2)%3]
		ch.RequestedAmount = int64(100 * (i + 1))
		ch.CardLastFour = lastFours[i%4]
		ch.Email = fmt.Sprintf("buyer%d@example.jp", i%5)
		ch.Metadata = chargeMetadata(i)
		all, inStore = append(all, ch), append(inStore, ch)
		// Look-alikes in the merchant's other store and at another
		// merchant: a filter that forgets its scope shows them.
		if i%5 == 2 {
			again := newCharge(tok2, i*10+1)
			again.Mode, again.Status, again.Currency, again.RequestedAmount = ch.Mode, ch.Status, ch.Currency, ch.RequestedAmount
			again.CardLastFour, again.Email, again.Metadata = ch.CardLastFour, ch.Email, ch.Metadata
			all = append(all, again)
		}
		if i%7 == 3 {
			foreign := newCharge(foreignTok, i*10+2)
			foreign.Mode, foreign.Status, foreign.Currency, foreign.RequestedAmount = ch.Mode, ch.Status, ch.Currency, ch.RequestedAmount
			foreign.CardLastFour, foreign.Email, foreign.Metadata = ch.CardLastFour, ch.Email, ch.Metadata
			all = append(all, foreign)
		}
	}
	createCharges(t, s, all...)

	list := func(t *testing.T, f payment.ChargeFilter, p payment.ListParams) payment.Page[*payment.Charge] {
		t.Helper()
		var page payment.Page[*payment.Charge]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListCharges(ctx, f, p)
			return err
		})
		return page
	}
	type rule = func(*payment.Charge) bool
	inScope := func(merchantID, storeID uuid.UUID) rule {
		return func(ch *payment.Charge) bool {
			return ch.MerchantID == merchantID && (storeID == uuid.Nil || ch.StoreID == storeID)
		}
	}
	and := allOf[*payment.Charge]
	nothing := func(*payment.Charge) bool { return false }
	store := payment.ChargeFilter{MerchantID: w.m.ID, StoreID: w.st.ID}
	inStoreRule := inScope(w.m.ID, w.st.ID)
	with := func(change func(f *payment.ChargeFilter)) payment.ChargeFilter {
		f := store
		change(&f)
		return f
	}
	type tc = filterCase[payment.ChargeFilter, *payment.Charge]
	// Time bounds on the 11th charge: exactly its time (with nanoseconds
	// and in JST), the same instant in UTC, and a microsecond past it.
	edge := inStore[10]
	stored := edge.CreatedOn.Truncate(time.Microsecond)
	after, before := stored.Add(time.Microsecond), stored.Add(-time.Microsecond)
	cases := []tc{
		{name: "Store", filter: store, match: inStoreRule},
		{name: "Merchant", filter: payment.ChargeFilter{MerchantID: w.m.ID}, match: inScope(w.m.ID, uuid.Nil)},
		{name: "SecondStore", filter: payment.ChargeFilter{MerchantID: w.m.ID, StoreID: w.st2.ID}, match: inScope(w.m.ID, w.st2.ID)},
		{name: "OtherMerchant", filter: payment.ChargeFilter{MerchantID: w.other.ID}, match: inScope(w.other.ID, uuid.Nil)},
		{name: "StoreOfAnotherMerchant", filter: payment.ChargeFilter{MerchantID: w.m.ID, StoreID: w.otherSt.ID}, match: nothing, none: true},
		{name: "ModeTest", filter: with(func(f *payment.ChargeFilter) { f.Mode = payment.ModeTest }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.Mode == payment.ModeTest })},
		{name: "ModeLive", filter: with(func(f *payment.ChargeFilter) { f.Mode = payment.ModeLive }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.Mode == payment.ModeLive })},
		{name: "CurrencyUSD", filter: with(func(f *payment.ChargeFilter) { f.Currency = "USD" }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.Currency == "USD" })},
		{name: "FromInclusive", filter: with(func(f *payment.ChargeFilter) { f.From = timep(edge.CreatedOn) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return within(ch.CreatedOn, &edge.CreatedOn, nil) })},
		{name: "FromUTC", filter: with(func(f *payment.ChargeFilter) { f.From = timep(edge.CreatedOn.UTC()) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return within(ch.CreatedOn, &edge.CreatedOn, nil) })},
		{name: "FromMicrosecondAfter", filter: with(func(f *payment.ChargeFilter) { f.From = &after }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return within(ch.CreatedOn, &after, nil) })},
		{name: "ToInclusive", filter: with(func(f *payment.ChargeFilter) { f.To = timep(edge.CreatedOn) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return within(ch.CreatedOn, nil, &edge.CreatedOn) })},
		{name: "ToMicrosecondBefore", filter: with(func(f *payment.ChargeFilter) { f.To = &before }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return within(ch.CreatedOn, nil, &before) })},
		{name: "FromToOneInstant", filter: with(func(f *payment.ChargeFilter) { f.From, f.To = timep(edge.CreatedOn), timep(edge.CreatedOn.UTC()) }),
			match: func(ch *payment.Charge) bool { return ch.ID == edge.ID }},
		{name: "FromToRange", filter: with(func(f *payment.ChargeFilter) {
			f.From, f.To = timep(inStore[5].CreatedOn), timep(inStore[20].CreatedOn)
		}),
			match: and(inStoreRule, func(ch *payment.Charge) bool {
				return within(ch.CreatedOn, &inStore[5].CreatedOn, &inStore[20].CreatedOn)
			})},
		{name: "FromAfterTo", filter: with(func(f *payment.ChargeFilter) { f.From, f.To = &after, &before }), match: nothing, none: true},
		{name: "AmountFromInclusive", filter: with(func(f *payment.ChargeFilter) { f.AmountFrom = int64p(1500) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.RequestedAmount >= 1500 })},
		{name: "AmountToInclusive", filter: with(func(f *payment.ChargeFilter) { f.AmountTo = int64p(1500) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.RequestedAmount <= 1500 })},
		{name: "AmountRange", filter: with(func(f *payment.ChargeFilter) { f.AmountFrom, f.AmountTo = int64p(1000), int64p(2000) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.RequestedAmount >= 1000 && ch.RequestedAmount <= 2000 })},
		{name: "AmountExact", filter: with(func(f *payment.ChargeFilter) { f.AmountFrom, f.AmountTo = int64p(700), int64p(700) }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.RequestedAmount == 700 })},
		{name: "TokenID", filter: with(func(f *payment.ChargeFilter) { f.TokenID = toks[1].ID }),
			match: func(ch *payment.Charge) bool { return ch.TokenID == toks[1].ID }},
		{name: "TokenOfAnotherStore", filter: with(func(f *payment.ChargeFilter) { f.TokenID = tok2.ID }), match: nothing, none: true},
		{name: "LastFour", filter: with(func(f *payment.ChargeFilter) { f.LastFour = "0005" }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.CardLastFour == "0005" })},
		{name: "Email", filter: with(func(f *payment.ChargeFilter) { f.Email = "buyer3@example.jp" }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.Email == "buyer3@example.jp" })},
		{name: "Combined", filter: with(func(f *payment.ChargeFilter) {
			f.Mode, f.Currency, f.AmountFrom, f.LastFour = payment.ModeLive, "JPY", int64p(1000), "4444"
		}), match: and(inStoreRule, func(ch *payment.Charge) bool {
			return ch.Mode == payment.ModeLive && ch.Currency == "JPY" && ch.RequestedAmount >= 1000 && ch.CardLastFour == "4444"
		})},
		{name: "CombinedTokenTimeAmount", filter: with(func(f *payment.ChargeFilter) {
			f.TokenID, f.From, f.AmountTo = toks[0].ID, timep(inStore[6].CreatedOn), int64p(3000)
		}), match: func(ch *payment.Charge) bool {
			return ch.TokenID == toks[0].ID && within(ch.CreatedOn, &inStore[6].CreatedOn, nil) && ch.RequestedAmount <= 3000
		}},
		{name: "CombinedMerchantWide", filter: payment.ChargeFilter{MerchantID: w.m.ID, Status: payment.ChargeAuthorized, Email: "buyer2@example.jp"},
			match: and(inScope(w.m.ID, uuid.Nil), func(ch *payment.Charge) bool {
				return ch.Status == payment.ChargeAuthorized && ch.Email == "buyer2@example.jp"
			})},
		{name: "CombinedEmailMetadata", filter: with(func(f *payment.ChargeFilter) {
			f.Email, f.MetadataKey, f.MetadataValue = "buyer0@example.jp", "order_id", "123"
		}), match: and(inStoreRule, func(ch *payment.Charge) bool {
			return ch.Email == "buyer0@example.jp" && ch.Metadata.Matches("order_id", "123")
		})},
		{name: "CombinedCardholderExpiryLastFour", filter: with(func(f *payment.ChargeFilter) {
			f.Cardholder, f.ExpYear, f.LastFour = "TARO YAMADA", intp(2032), "1111"
		}), match: and(inStoreRule, func(ch *payment.Charge) bool {
			return ch.TokenID == toks[2].ID && ch.CardLastFour == "1111"
		})},
		{name: "CombinedModeStatus", filter: with(func(f *payment.ChargeFilter) { f.Mode, f.Status = payment.ModeTest, payment.ChargeAwaiting }),
			match: and(inStoreRule, func(ch *payment.Charge) bool {
				return ch.Mode == payment.ModeTest && ch.Status == payment.ChargeAwaiting
			})},
	}
	// The token's card and phone (payment.ChargeFilter.MatchesToken).
	for _, c := range []struct {
		name string
		set  func(f *payment.ChargeFilter)
		none bool
	}{
		{"CardholderAnyCase", func(f *payment.ChargeFilter) { f.Cardholder = "taro YAMADA" }, false},
		{"CardholderWhole", func(f *payment.ChargeFilter) { f.Cardholder = "TARO" }, true},
		{"ExpMonth", func(f *payment.ChargeFilter) { f.ExpMonth = intp(12) }, false},
		{"ExpYear", func(f *payment.ChargeFilter) { f.ExpYear = intp(2032) }, false},
		{"ExpiryOfNoCard", func(f *payment.ChargeFilter) { f.ExpMonth, f.ExpYear = intp(3), intp(2031) }, true},
		{"CardBIN", func(f *payment.ChargeFilter) { f.CardBIN = "555555" }, false},
		{"CardBINAndLastFour", func(f *payment.ChargeFilter) { f.CardBIN, f.LastFour = "424242", "0005" }, false},
		{"PhoneLocal", func(f *payment.ChargeFilter) { f.Phone = "0312345678" }, false},
		{"PhoneWithCountryCode", func(f *payment.ChargeFilter) { f.Phone = "810312345678" }, false},
		{"PhoneOtherCountry", func(f *payment.ChargeFilter) { f.Phone = "12025550123" }, false},
		{"PhoneCountryCodeOnly", func(f *payment.ChargeFilter) { f.Phone = "81" }, true},
	} {
		f := with(c.set)
		cases = append(cases, tc{name: c.name, filter: f, none: c.none,
			match: and(inStoreRule, func(ch *payment.Charge) bool {
				return f.MatchesToken(tokenOf[ch.TokenID]) && (f.LastFour == "" || ch.CardLastFour == f.LastFour)
			})})
	}
	for _, st := range chargeStatuses {
		cases = append(cases, tc{name: "Status" + string(st), filter: with(func(f *payment.ChargeFilter) { f.Status = st }),
			match: and(inStoreRule, func(ch *payment.Charge) bool { return ch.Status == st })})
	}
	for _, m := range []struct {
		name, key, value string
		none             bool
	}{
		{"StringOrNumber", "order_id", "123", false},
		{"NoPrefixMatch", "order_id", "12", true},
		{"LongerString", "order_id", "1234", false},
		{"BoolTrue", "paid", "true", false},
		{"BoolFalse", "paid", "false", false},
		{"BoolNotOne", "paid", "1", true},
		{"BigInteger", "big", "12345678901234567890", false},
		{"BigIntegerNeighbour", "big", "12345678901234567891", false},
		{"BigIntegerAsFloat", "big", "1.2345678901234567e+19", true},
		{"DecimalAsWritten", "price", "1.50", false},
		{"DecimalShort", "price", "1.5", false},
		{"KeyWithDot", "shop.order", "A-1", false},
		{"Array", "tags", `["coffee"]`, true},
		{"ArrayElement", "tags", "coffee", true},
		{"MissingKey", "nope", "123", true},
		{"Number", "i", "25", false},
	} {
		cases = append(cases, tc{
			name:   "Metadata" + m.name,
			filter: with(func(f *payment.ChargeFilter) { f.MetadataKey, f.MetadataValue = m.key, m.value }),
			match:  and(inStoreRule, func(ch *payment.Charge) bool { return ch.Metadata.Matches(m.key, m.value) }),
			none:   m.none,
		})
	}
	checkFilters(t, all, chargeID, list, cases)
	t.Run("CardFollowsTokenUpdate", func(t *testing.T) {
		// The card filters read the token as it is now: a new expiry
		// moves its charges.
		renewed := *toks[1]
		renewed.Card.ExpMonth, renewed.Card.ExpYear = 7, 2035
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, &renewed) })
		var want []uuid.UUID
		for _, ch := range inStore {
			if ch.TokenID == toks[1].ID {
				want = append(want, ch.ID)
			}
		}
		checkPage(t, pageCheck{want: reversed(want), total: intp(len(want))},
			list(t, with(func(f *payment.ChargeFilter) { f.ExpMonth, f.ExpYear = intp(7), intp(2035) }), payment.ListParams{Limit: payment.MaxLimit}), chargeID)
	})

	t.Run("Paging", func(t *testing.T) {
		var asc []uuid.UUID
		for _, ch := range inStore {
			asc = append(asc, ch.ID)
		}
		checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.Charge] { return list(t, store, p) }, chargeID)
	})
	t.Run("PagingFiltered", func(t *testing.T) {
		// A filtered list pages through its own rows: the cursor and
		// TotalHits see the filter.
		f := payment.ChargeFilter{MerchantID: w.m.ID, Currency: "EUR"}
		var asc []uuid.UUID
		for _, ch := range all {
			if ch.MerchantID == w.m.ID && ch.Currency == "EUR" {
				asc = append(asc, ch.ID)
			}
		}
		first := list(t, f, payment.ListParams{Limit: 3})
		checkPage(t, pageCheck{want: reversed(asc)[:3], hasMore: true, total: intp(len(asc))}, first, chargeID)
		for _, dir := range []payment.Direction{payment.Desc, payment.Asc} {
			want := reversed(asc)
			if dir == payment.Asc {
				want = asc
			}
			got := walk(t, func(p payment.ListParams) payment.Page[*payment.Charge] { return list(t, f, p) }, chargeID, 4, dir)
			if !slices.Equal(got, want) {
				t.Errorf("walking %s = %v\nwant %v", dir, got, want)
			}
		}
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, store, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if len(page.Items) != len(inStore) {
			t.Fatalf("got %d charges, want %d", len(page.Items), len(inStore))
		}
		for i, got := range page.Items {
			checkSame(t, got, inStore[i])
		}
	})
}

// testRecentCharge checks the duplicate-charge rule's query (README,
// duplicate charges): is there a charge on the token for this amount and currency, created
// at or after since (inclusive, at the microsecond), that was accepted? A
// charge is accepted unless it was itself rejected as a duplicate, which
// its error code 311 (payment.ErrTooManyCharges) tells: a charge the
// acquirer declined (306) was processed, and counts.
func testRecentCharge(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok, tok2 := newToken(w.st, 1), newToken(w.st, 2)
	createTokens(t, s, tok, tok2)
	charge := func(tk *payment.TransactionToken, i int, amount int64, currency string, status payment.ChargeStatus, code int) *payment.Charge {
		ch := newCharge(tk, i)
		ch.RequestedAmount, ch.Currency, ch.Status, ch.Error = amount, currency, status, nil
		if code != 0 {
			ch.Error = payment.NewPaymentError(code, "test")
		}
		return ch
	}
	accepted := charge(tok, 100, 5000, "JPY", payment.ChargeSuccessful, 0)
	duplicate := charge(tok, 120, 5000, "JPY", payment.ChargeFailed, payment.ErrTooManyCharges)
	onlyDuplicate := charge(tok, 200, 7000, "JPY", payment.ChargeFailed, payment.ErrTooManyCharges)
	declined := charge(tok, 300, 8000, "JPY", payment.ChargeFailed, payment.ErrCardRejected)
	pending := charge(tok, 400, 9000, "USD", payment.ChargePending, 0)
	createCharges(t, s, accepted, duplicate, onlyDuplicate, declined, pending)
	stored := func(ch *payment.Charge) time.Time { return ch.CreatedOn.Truncate(time.Microsecond) }

	cases := []struct {
		name     string
		token    uuid.UUID
		amount   int64
		currency string
		since    time.Time
		want     bool
	}{
		{"SinceItsTime", tok.ID, 5000, "JPY", accepted.CreatedOn, true},
		{"SinceItsTimeUTC", tok.ID, 5000, "JPY", accepted.CreatedOn.UTC(), true},
		{"SinceEarlier", tok.ID, 5000, "JPY", at(70), true},
		{"SinceAMicrosecondLater", tok.ID, 5000, "JPY", stored(accepted).Add(time.Microsecond), false},
		// The duplicate at 120 does not extend the window.
		{"OnlyItsDuplicateAfterSince", tok.ID, 5000, "JPY", at(110), false},
		{"OtherAmount", tok.ID, 5001, "JPY", at(0), false},
		{"OtherCurrency", tok.ID, 5000, "USD", at(0), false},
		{"OtherToken", tok2.ID, 5000, "JPY", at(0), false},
		{"MissingToken", payment.NewID(), 5000, "JPY", at(0), false},
		{"RejectedDuplicateOnly", tok.ID, 7000, "JPY", at(0), false},
		{"DeclinedCounts", tok.ID, 8000, "JPY", at(0), true},
		{"PendingCounts", tok.ID, 9000, "USD", stored(pending), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			view(t, s, func(ctx context.Context, tx payment.Tx) error {
				got, err := tx.RecentCharge(ctx, c.token, c.amount, c.currency, c.since)
				if err == nil && got != c.want {
					t.Errorf("RecentCharge = %v, want %v", got, c.want)
				}
				return err
			})
		})
	}
	t.Run("SeesItsOwnTransaction", func(t *testing.T) {
		// The rule runs in the transaction that records the charge: a
		// charge recorded earlier in it counts.
		fresh := charge(tok2, 500, 6000, "EUR", payment.ChargePending, 0)
		err := s.Update(t.Context(), func(tx payment.Tx) error {
			ctx := t.Context()
			if err := tx.CreateCharge(ctx, fresh); err != nil {
				return err
			}
			got, err := tx.RecentCharge(ctx, tok2.ID, 6000, "EUR", at(499))
			if err == nil && !got {
				t.Error("RecentCharge does not see a charge of its own transaction")
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("UpdatedToDuplicate", func(t *testing.T) {
		// What counts is the stored error code: a charge updated to
		// carry 311 stops counting, and one updated away from it counts.
		dup := *accepted
		dup.Status, dup.Error, dup.UpdatedOn = payment.ChargeFailed, payment.NewPaymentError(payment.ErrTooManyCharges, "test"), at(130)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, &dup) })
		ok := *onlyDuplicate
		ok.Status, ok.Error = payment.ChargeSuccessful, nil
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateCharge(ctx, &ok) })
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			if got, err := tx.RecentCharge(ctx, tok.ID, 5000, "JPY", at(0)); err != nil || got {
				t.Errorf("after updating to 311, RecentCharge = %v, %v; want false", got, err)
			}
			if got, err := tx.RecentCharge(ctx, tok.ID, 7000, "JPY", at(0)); err != nil || !got {
				t.Errorf("after clearing 311, RecentCharge = %v, %v; want true", got, err)
			}
			return nil
		})
	})
}
