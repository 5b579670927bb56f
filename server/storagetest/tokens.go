package storagetest

import (
	"time"

	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// customerIDKey and gopayCustomerIDKey are the metadata keys that link a
// token to a customer; the TokenFilter's CustomerID matches the value (a
// string) of the first a token holds (payment.TransactionToken.CustomerID).
const (
	customerIDKey      = "univapay-customer-id"
	gopayCustomerIDKey = "gopay-customer-id"
)

func boolp(b bool) *bool { return &b }

// fullMetadata holds every kind of value metadata can hold, each in a form
// that a careless engine would change: a string with quotes, backslashes
// and non-ASCII text, a key with a dot (a JSON path would split it), an
// integer no float64 holds exactly, a decimal whose text has a trailing
// zero, a boolean and an array of mixed values. Numbers must come back as
// the json.Number they were written as.
func fullMetadata(i int) payment.Metadata {
	return payment.Metadata{
		"order_id":   fmt.Sprintf("order-%d", i),
		"note":       `決済 "quoted" \ back-slashed`,
		"shop.order": fmt.Sprintf("A-%d", i),
		"big":        json.Number("12345678901234567890"),
		"price":      json.Number("-1.50"),
		"gift":       true,
		"tags":       []any{"coffee", json.Number("3"), false},
	}
}

// newToken is a transaction token of st with every field set.
func newToken(st *payment.Store, i int) *payment.TransactionToken {
	lastUsed := at(i + 5)
	return &payment.TransactionToken{
		ID: payment.NewID(), StoreID: st.ID, MerchantID: st.MerchantID, Mode: payment.ModeLive,
		PaymentType: payment.PaymentTypeCard, Type: payment.Recurring, UsageLimit: "monthly",
		Email: fmt.Sprintf("shopper%d@example.jp", i), Active: true, Metadata: fullMetadata(i),
		IPAddress: "2001:db8::42",
		Card: payment.TokenCard{
			Cardholder: "TARO YAMADA", ExpMonth: 12, ExpYear: 2031, BIN: "424242", LastFour: "4242", Brand: "visa",
			Billing: payment.Billing{
				Line1: "1-2-3 Shibuya", Line2: "Kessai Building 4F", State: "Tokyo", City: "渋谷区",
				Country: "JP", Zip: "150-0002",
				PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "0312345678"},
			},
			SealedNumber: payment.Sealed{KeyID: "card-key-2025-01", Data: []byte("\x00sealed-number\xff\x01")},
			SealedCVC:    payment.Sealed{KeyID: "card-key-2025-02", Data: []byte("\x00sealed-cvc\xfe")},
		},
		CVVAuthorize: payment.CVVAuthorize{
			Enabled: true, Currency: "JPY", Status: payment.CVVAuthFailed, AuthorizationID: uuid.NewSHA1(uuid.Nil, []byte(fmt.Sprint(i))),
			Error: &payment.PaymentError{Code: 305, Message: "CARD_CVV_INVALID", Detail: "incorrect_cvc"},
		},
		ThreeDS: payment.ThreeDSSettings{
			Enabled: true, Mode: "require", RedirectEndpoint: "https://shop.example/3ds/return?x=1&y=2",
			RedirectID: "redirect-" + fmt.Sprint(i), Status: payment.ThreeDSFailed, Exempted: true,
			Error: &payment.PaymentError{Code: payment.ErrThreeDSNotCompleted, Message: "THREE_DS_COULD_NOT_BE_COMPLETED",
				Detail: `the 3-D Secure authentication was "canceled"`},
			External: externalThreeDS(i),
		},
		// A card token has no other method's data; the engine stores it
		// all the same, as one document.
		Data: payment.TokenData{
			Brand: "pay_pay_online", CallMethod: "app", OSType: "android", UserIdentifier: fmt.Sprintf("user-%d@wallet.example", i),
			CustomerName: "山田 \"太郎\" " + fmt.Sprint(i), ConvenienceStore: "daily_yamazaki",
			PhoneNumber: &payment.Phone{CountryCode: 81, LocalNumber: "0312345678"}, ExpirationPeriod: 169 * time.Hour,
			ExpirationTimeShift: "23:59:59+09:00",
			VirtualAccount: &payment.VirtualAccount{
				AccountID: fmt.Sprint("va-", i), BankCode: "0310", BankName: "GMOあおぞらネット銀行", BranchCode: "101",
				BranchName: "法人営業部", AccountType: "ordinary", AccountNumber: "1234567", AccountHolderName: "ケッサイ コーヒー",
			},
		},
		FromBrowser: true, Used: true, LastUsedOn: &lastUsed, CreatedOn: at(i), UpdatedOn: at(i + 1),
	}
}

// externalThreeDS is a merchant's own 3-D Secure result with every field
// set; its sealed authentication value holds bytes that are not text.
func externalThreeDS(i int) *payment.ExternalThreeDS {
	return &payment.ExternalThreeDS{
		ECI: "05", DSTransactionID: "f25084f0-5b16-4c0a-ae5d-b24808a95e4b",
		ServerTransactionID: uuid.NewSHA1(uuid.Nil, []byte(fmt.Sprint("3ds", i))).String(),
		MessageVersion:      "2.2.0", TransactionStatus: "Y",
		AuthenticationValue: payment.Sealed{KeyID: "card-key-2025-03", Data: []byte("\x00sealed-cavv\xff" + fmt.Sprint(i))},
	}
}

// tokenFixed are the token's fields an update never changes: its identity,
// its owner and its mode. UpdateToken writes every other field.
var tokenFixed = []string{"ID", "StoreID", "MerchantID", "Mode", "CreatedOn"}

// changedToken is tok with every field but tokenFixed changed.
func changedToken(tok *payment.TransactionToken) *payment.TransactionToken {
	c := *tok
	lastUsed := at(900)
	c.PaymentType, c.Type, c.UsageLimit = "apple_pay", payment.SubscriptionToken, "weekly"
	c.Email, c.Active, c.IPAddress = "changed@example.com", false, "203.0.113.7"
	c.Metadata = payment.Metadata{"order_id": "changed", "n": json.Number("98765432109876543210"), "gift": false}
	c.Card = payment.TokenCard{
		Cardholder: "HANAKO SATO", ExpMonth: 3, ExpYear: 2032, BIN: "555555", LastFour: "4444", Brand: "mastercard",
		Billing: payment.Billing{
			Line1: "5-6-7 Umeda", Line2: "Room 8", State: "Osaka", City: "大阪市", Country: "US", Zip: "530-0001",
			PhoneNumber: &payment.Phone{CountryCode: 1, LocalNumber: "2025550123"},
		},
		SealedNumber: payment.Sealed{KeyID: "card-key-2026-01", Data: []byte("resealed-number")},
		SealedCVC:    payment.Sealed{KeyID: "card-key-2026-02", Data: []byte("resealed-cvc")},
	}
	c.CVVAuthorize = payment.CVVAuthorize{Enabled: false, Currency: "USD", Status: payment.CVVAuthCurrent, AuthorizationID: payment.NewID()}
	c.ThreeDS = payment.ThreeDSSettings{
		Enabled: false, Mode: "if_available", RedirectEndpoint: "https://other.example/", RedirectID: "other",
		Status: payment.ThreeDSSuccessful, Exempted: false, External: changedExternalThreeDS(),
		Error: &payment.PaymentError{Code: payment.ErrRejectedAfter3DS, Message: "CARD_REJECTED", Detail: "rejected after 3-D Secure"},
	}
	c.Data = payment.TokenData{
		Brand: "alipay_online", CallMethod: "web", OSType: "ios", UserIdentifier: "changed", CustomerName: "Hanako",
		ConvenienceStore: "lawson", PhoneNumber: &payment.Phone{CountryCode: 1, LocalNumber: "2025550123"},
		ExpirationPeriod: 720 * time.Hour, ExpirationTimeShift: "09:00:00+09:00",
		VirtualAccount: &payment.VirtualAccount{
			AccountID: "va-changed", BankCode: "9999", BankName: "テスト銀行", BranchCode: "001", BranchName: "本店",
			AccountType: "current", AccountNumber: "7654321", AccountHolderName: "CHANGED",
		},
	}
	c.FromBrowser, c.Used, c.LastUsedOn, c.UpdatedOn = false, false, &lastUsed, at(901)
	return &c
}

// changedExternalThreeDS differs from every externalThreeDS in every field.
func changedExternalThreeDS() *payment.ExternalThreeDS {
	return &payment.ExternalThreeDS{
		ECI: "06", DSTransactionID: "0b9a5a8e-0c6f-4e43-9d55-6f0f1a2b3c4d", ServerTransactionID: "6b1f8f2e-7a0d-4c7e-8f5b-1d2c3b4a5e6f",
		MessageVersion: "2.1.0", TransactionStatus: "A",
		AuthenticationValue: payment.Sealed{KeyID: "card-key-2026-03", Data: []byte("resealed-cavv")},
	}
}

func createTokens(t *testing.T, s payment.Storage, toks ...*payment.TransactionToken) {
	t.Helper()
	update(t, s, func(ctx context.Context, tx payment.Tx) error {
		for _, tok := range toks {
			if err := tx.CreateToken(ctx, tok); err != nil {
				return err
			}
		}
		return nil
	})
}

func readToken(t *testing.T, s payment.Storage, id uuid.UUID) *payment.TransactionToken {
	t.Helper()
	var tok *payment.TransactionToken
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		var err error
		tok, err = tx.Token(ctx, id)
		return err
	})
	return tok
}

func tokenID(tok *payment.TransactionToken) uuid.UUID { return tok.ID }

func testTokens(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	tok, other := newToken(w.st, 1), newToken(w.st, 2)
	requireNoZeroFields(t, tok)
	createTokens(t, s, tok, other)
	checkSame(t, readToken(t, s, tok.ID), tok)

	t.Run("Update", func(t *testing.T) {
		changed := changedToken(tok)
		requireAllChanged(t, tok, changed, tokenFixed...)
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, changed) })
		checkSame(t, readToken(t, s, tok.ID), changed)
		checkSame(t, readToken(t, s, other.ID), other)
	})
	t.Run("UpdateClears", func(t *testing.T) {
		// What an update takes away is gone: a nil pointer stays nil, a
		// token without a CVC has none, a card token has no wallet.
		cleared := changedToken(tok)
		cleared.LastUsedOn, cleared.Card.Billing = nil, payment.Billing{}
		cleared.Card.SealedCVC = payment.Sealed{}
		cleared.Metadata = payment.Metadata{}
		cleared.ThreeDS.Error, cleared.ThreeDS.External = nil, nil
		cleared.Data = payment.TokenData{}
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, cleared) })
		got := readToken(t, s, tok.ID)
		checkSame(t, got, cleared)
		if got.Card.SealedCVC.Data != nil {
			t.Errorf("SealedCVC.Data = %q, want nil", got.Card.SealedCVC.Data)
		}
	})
	t.Run("EraseTokenCVC", func(t *testing.T) {
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.EraseTokenCVC(ctx, other.ID) })
		got := readToken(t, s, other.ID)
		// The worker tells an erased CVC by SealedCVC.Data == nil (an
		// empty slice would read as a CVC to open). The key id of nothing
		// means nothing: the suite does not look at it.
		if got.Card.SealedCVC.Data != nil {
			t.Errorf("after EraseTokenCVC, SealedCVC.Data = %q, want nil", got.Card.SealedCVC.Data)
		}
		want := *other
		want.Card.SealedCVC = payment.Sealed{KeyID: got.Card.SealedCVC.KeyID}
		checkSame(t, got, &want)
		// Erasing again, or the CVC of a token without one, is harmless.
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.EraseTokenCVC(ctx, other.ID) })
		checkSame(t, readToken(t, s, other.ID), &want)
	})
}

// walletToken is an online or QR-merchant token of st: a wallet and no
// card, so no sealed number (nil), no CVV authorisation and no 3-D Secure.
func walletToken(st *payment.Store, i int, paymentType string, wallet payment.TokenData) *payment.TransactionToken {
	tok := newToken(st, i)
	tok.PaymentType, tok.Type, tok.UsageLimit, tok.Data = paymentType, payment.OneTime, "", wallet
	tok.Card, tok.CVVAuthorize, tok.ThreeDS = payment.TokenCard{}, payment.CVVAuthorize{}, payment.ThreeDSSettings{}
	return tok
}

// testTokenShapes: the tokens of each payment type come back as written,
// with what they do not have left empty: a card token's wallet, a wallet
// token's card. A wallet token has no sealed number: its Data is nil, as
// written (not an empty slice, which would read as a number to open), also
// where the engine's column cannot hold a NULL.
func testTokenShapes(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	card := newToken(w.st, 1)
	card.Data = payment.TokenData{}
	cases := []struct {
		name string
		tok  *payment.TransactionToken
	}{
		{"CardWithoutWallet", card},
		{"Online", walletToken(w.st, 2, payment.PaymentTypeOnline, payment.TokenData{
			Brand: "we_chat_online", CallMethod: "sdk", OSType: "ios", UserIdentifier: "oUpF8uMuAJO_M2pxb1Q9zNjWeS6o",
		})},
		{"OnlineWithoutOS", walletToken(w.st, 3, payment.PaymentTypeOnline, payment.TokenData{
			Brand: "alipay_online", CallMethod: "http_post",
		})},
		{"QRMerchant", walletToken(w.st, 4, payment.PaymentTypeQRMerchant, payment.TokenData{Brand: "pay_pay_merchant"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			createTokens(t, s, c.tok)
			checkShape(t, readToken(t, s, c.tok.ID), c.tok)
			// An update writes them back as they are.
			updated := *c.tok
			updated.Used, updated.Active, updated.LastUsedOn, updated.UpdatedOn = false, false, nil, at(50)
			update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, &updated) })
			checkShape(t, readToken(t, s, c.tok.ID), &updated)
		})
	}
}

// checkShape compares a token with what it should be, and tells a nil
// sealed number or CVC from an empty one, which checkSame does not.
func checkShape(t *testing.T, got, want *payment.TransactionToken) {
	t.Helper()
	checkSame(t, got, want)
	for _, f := range []struct {
		name      string
		got, want []byte
	}{
		{"SealedNumber", got.Card.SealedNumber.Data, want.Card.SealedNumber.Data},
		{"SealedCVC", got.Card.SealedCVC.Data, want.Card.SealedCVC.Data},
	} {
		switch {
		case f.want == nil && f.got != nil:
			t.Errorf("Card.%s.Data = %q, want nil", f.name, f.got)
		case f.want != nil && f.got == nil:
			t.Errorf("Card.%s.Data = nil, want %q", f.name, f.want)
		}
	}
}

func testListTokens(t *testing.T, s payment.Storage) {
	w := newTenants(t, s)
	const custA, custB = "0194b1f2-aaaa-7000-8000-000000000001", "0194b1f2-bbbb-7000-8000-000000000002"
	types := []payment.TokenType{payment.OneTime, payment.SubscriptionToken, payment.Recurring}
	// Tokens of the three stores are interleaved, and the other tenants'
	// share emails and customers with the first store's: a list that
	// forgets its scope shows them.
	var all, inStore []*payment.TransactionToken
	for i := range 30 {
		tok := newToken(w.st, i)
		if i%2 == 0 {
			tok.Mode = payment.ModeTest
		}
		tok.Type = types[i%3]
		tok.Email = fmt.Sprintf("Shopper%d@Example.jp", i%4)
		tok.Active = i%4 != 3
		tok.Card.Cardholder = []string{"TARO YAMADA", "Hanako Sato", "taro suzuki"}[i%3]
		tok.Card.LastFour = []string{"4242", "0005", "1111", "4444", "5%_0"}[i%5]
		tok.PaymentType = []string{payment.PaymentTypeCard, payment.PaymentTypeOnline, payment.PaymentTypeQRMerchant}[i%3]
		if i%2 == 1 {
			tok.PaymentType = payment.PaymentTypeCard
		}
		switch i % 7 {
		case 0:
			tok.Metadata[customerIDKey] = custA
		case 1:
			tok.Metadata[customerIDKey] = custB
		case 2:
			tok.Metadata[gopayCustomerIDKey] = custA
		case 3:
			// The current key wins over the older one.
			tok.Metadata[customerIDKey], tok.Metadata[gopayCustomerIDKey] = custB, custA
		case 4:
			tok.Metadata[customerIDKey] = json.Number("7") // not a string: no customer
		}
		all, inStore = append(all, tok), append(inStore, tok)
		if i%4 == 1 {
			again := newToken(w.st2, i)
			again.Mode, again.Type, again.Email, again.Metadata = tok.Mode, tok.Type, tok.Email, tok.Metadata
			again.Active, again.Card.Cardholder, again.Card.LastFour = tok.Active, tok.Card.Cardholder, tok.Card.LastFour
			all = append(all, again)
		}
		if i%6 == 0 {
			foreign := newToken(w.otherSt, i)
			foreign.Mode, foreign.Type, foreign.Email, foreign.Metadata = tok.Mode, tok.Type, tok.Email, tok.Metadata
			foreign.Active, foreign.Card.Cardholder, foreign.Card.LastFour = tok.Active, tok.Card.Cardholder, tok.Card.LastFour
			all = append(all, foreign)
		}
	}
	createTokens(t, s, all...)

	list := func(t *testing.T, f payment.TokenFilter, p payment.ListParams) payment.Page[*payment.TransactionToken] {
		t.Helper()
		var page payment.Page[*payment.TransactionToken]
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			var err error
			page, err = tx.ListTokens(ctx, f, p)
			return err
		})
		return page
	}
	inScope := func(merchantID, storeID uuid.UUID) func(*payment.TransactionToken) bool {
		return func(tok *payment.TransactionToken) bool {
			return tok.MerchantID == merchantID && (storeID == uuid.Nil || tok.StoreID == storeID)
		}
	}
	customer := func(tok *payment.TransactionToken) string {
		for _, k := range []string{customerIDKey, gopayCustomerIDKey} {
			if s, isString := tok.Metadata[k].(string); isString && s != "" {
				return s
			}
		}
		return ""
	}
	store := payment.TokenFilter{MerchantID: w.m.ID, StoreID: w.st.ID}
	with := func(change func(f *payment.TokenFilter)) payment.TokenFilter {
		f := store
		change(&f)
		return f
	}
	and := func(rules ...func(*payment.TransactionToken) bool) func(*payment.TransactionToken) bool {
		return func(tok *payment.TransactionToken) bool {
			for _, r := range rules {
				if !r(tok) {
					return false
				}
			}
			return true
		}
	}
	inStoreRule := inScope(w.m.ID, w.st.ID)
	type tc = filterCase[payment.TokenFilter, *payment.TransactionToken]
	cases := []tc{
		{name: "Store", filter: store, match: inStoreRule},
		{name: "Merchant", filter: payment.TokenFilter{MerchantID: w.m.ID}, match: inScope(w.m.ID, uuid.Nil)},
		{name: "SecondStore", filter: payment.TokenFilter{MerchantID: w.m.ID, StoreID: w.st2.ID}, match: inScope(w.m.ID, w.st2.ID)},
		{name: "OtherMerchant", filter: payment.TokenFilter{MerchantID: w.other.ID}, match: inScope(w.other.ID, uuid.Nil)},
		{name: "StoreOfAnotherMerchant", filter: payment.TokenFilter{MerchantID: w.m.ID, StoreID: w.otherSt.ID},
			match: func(*payment.TransactionToken) bool { return false }, none: true},
		{name: "ModeTest", filter: with(func(f *payment.TokenFilter) { f.Mode = payment.ModeTest }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.Mode == payment.ModeTest })},
		{name: "ModeLive", filter: with(func(f *payment.TokenFilter) { f.Mode = payment.ModeLive }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.Mode == payment.ModeLive })},
		{name: "PaymentTypeOnline", filter: with(func(f *payment.TokenFilter) { f.PaymentType = payment.PaymentTypeOnline }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.PaymentType == payment.PaymentTypeOnline })},
		{name: "PaymentTypeCardMerchantWide", filter: payment.TokenFilter{MerchantID: w.m.ID, PaymentType: payment.PaymentTypeCard},
			match: and(inScope(w.m.ID, uuid.Nil), func(tok *payment.TransactionToken) bool { return tok.PaymentType == payment.PaymentTypeCard })},
		{name: "PaymentTypeNone", filter: with(func(f *payment.TokenFilter) { f.PaymentType = "paidy" }),
			match: func(*payment.TransactionToken) bool { return false }, none: true},
		{name: "CustomerID", filter: with(func(f *payment.TokenFilter) { f.CustomerID = custA }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return customer(tok) == custA })},
		{name: "CustomerIDUnknown", filter: with(func(f *payment.TokenFilter) { f.CustomerID = "0194b1f2-cccc-7000-8000-000000000003" }),
			match: func(*payment.TransactionToken) bool { return false }, none: true},
		{name: "CustomerIDB", filter: with(func(f *payment.TokenFilter) { f.CustomerID = custB }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return customer(tok) == custB })},
		{name: "CustomerIDNotAString", filter: with(func(f *payment.TokenFilter) { f.CustomerID = "7" }),
			match: func(*payment.TransactionToken) bool { return false }, none: true},
		{name: "Email", filter: with(func(f *payment.TokenFilter) { f.Email = "Shopper3@Example.jp" }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.Email == "Shopper3@Example.jp" })},
		{name: "EmailExactCase", filter: with(func(f *payment.TokenFilter) { f.Email = "shopper3@example.jp" }),
			match: func(*payment.TransactionToken) bool { return false }, none: true},
		{name: "Active", filter: with(func(f *payment.TokenFilter) { f.Active = boolp(true) }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.Active })},
		{name: "Inactive", filter: with(func(f *payment.TokenFilter) { f.Active = boolp(false) }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return !tok.Active })},
		{name: "InactiveMerchantWide", filter: payment.TokenFilter{MerchantID: w.m.ID, Active: boolp(false)},
			match: and(inScope(w.m.ID, uuid.Nil), func(tok *payment.TransactionToken) bool { return !tok.Active })},
		{name: "CombinedActiveCustomerSearch", filter: with(func(f *payment.TokenFilter) {
			f.Active, f.CustomerID, f.Search = boolp(true), custA, "example"
		}), match: and(inStoreRule, func(tok *payment.TransactionToken) bool {
			return tok.Active && customer(tok) == custA && tok.MatchesSearch("example")
		})},
		{name: "Combined", filter: with(func(f *payment.TokenFilter) {
			f.Mode, f.Type, f.CustomerID = payment.ModeTest, payment.OneTime, custA
		}), match: and(inStoreRule, func(tok *payment.TransactionToken) bool {
			return tok.Mode == payment.ModeTest && tok.Type == payment.OneTime && customer(tok) == custA
		})},
		{name: "CombinedMerchantWide", filter: payment.TokenFilter{MerchantID: w.m.ID, Mode: payment.ModeLive, Email: "Shopper1@Example.jp"},
			match: and(inScope(w.m.ID, uuid.Nil), func(tok *payment.TransactionToken) bool {
				return tok.Mode == payment.ModeLive && tok.Email == "Shopper1@Example.jp"
			})},
		{name: "CombinedNothing", filter: with(func(f *payment.TokenFilter) { f.Mode, f.Email = payment.ModeTest, "Shopper1@Example.jp" }),
			match: func(*payment.TransactionToken) bool { return false }, none: true},
	}
	for _, typ := range types {
		cases = append(cases, tc{name: "Type" + string(typ), filter: with(func(f *payment.TokenFilter) { f.Type = typ }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.Type == typ })})
	}
	// Search: a part of the e-mail or the cardholder's name, ASCII letters
	// in any case, or exactly the last four (% and _ are only characters).
	for _, q := range []string{"SHOPPER2", "example.JP", "hanako", "TARO", "yamada", "0005", "5%_0", "4242"} {
		cases = append(cases, tc{name: "Search" + q, filter: with(func(f *payment.TokenFilter) { f.Search = q }),
			match: and(inStoreRule, func(tok *payment.TransactionToken) bool { return tok.MatchesSearch(q) })})
	}
	for _, q := range []string{"%", "_", "424", "shopper9", "hanako yamada"} {
		cases = append(cases, tc{name: "SearchNothing" + q, filter: with(func(f *payment.TokenFilter) { f.Search = q }),
			match: func(*payment.TransactionToken) bool { return false }, none: true})
	}
	checkFilters(t, all, tokenID, list, cases)

	t.Run("Paging", func(t *testing.T) {
		var asc []uuid.UUID
		for _, tok := range inStore {
			asc = append(asc, tok.ID)
		}
		checkPaging(t, asc, func(t *testing.T, p payment.ListParams) payment.Page[*payment.TransactionToken] {
			return list(t, store, p)
		}, tokenID)
	})
	t.Run("ItemsComplete", func(t *testing.T) {
		page := list(t, store, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if len(page.Items) != len(inStore) {
			t.Fatalf("got %d tokens, want %d", len(page.Items), len(inStore))
		}
		for i, got := range page.Items {
			checkSame(t, got, inStore[i])
		}
	})
	t.Run("CustomerFollowsUpdate", func(t *testing.T) {
		// The customer id is part of the metadata: an update that changes
		// it moves the token between customers.
		moved := *inStore[2]
		moved.Metadata = payment.Metadata{customerIDKey: custA, "order_id": "moved"}
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, &moved) })
		dropped := *inStore[0] // was custA
		dropped.Metadata = payment.Metadata{"order_id": "dropped"}
		update(t, s, func(ctx context.Context, tx payment.Tx) error { return tx.UpdateToken(ctx, &dropped) })
		var want []uuid.UUID
		for _, tok := range inStore {
			if tok.ID == moved.ID || tok.ID != dropped.ID && customer(tok) == custA {
				want = append(want, tok.ID)
			}
		}
		checkPage(t, pageCheck{want: reversed(want), total: intp(len(want))},
			list(t, with(func(f *payment.TokenFilter) { f.CustomerID = custA }), payment.ListParams{Limit: payment.MaxLimit}), tokenID)
	})
}
