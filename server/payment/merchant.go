package payment

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// Merchant is an account that owns stores. It has one console user.
type Merchant struct {
	ID        uuid.UUID
	Name      string
	Email     string
	Verified  bool
	CreatedOn time.Time
}

// User is a console login of a merchant. Its password is kept only as a
// bcrypt hash: slow on purpose, because console logins are rare and a
// leaked table must not give passwords away. API calls never go through it.
type User struct {
	ID           uuid.UUID
	MerchantID   uuid.UUID
	Email        string
	PasswordHash []byte
	CreatedOn    time.Time
}

// Store is where payments are taken; app tokens, tokens and charges belong
// to one store.
type Store struct {
	ID         uuid.UUID
	MerchantID uuid.UUID
	Name       string
	// PCICompliant stores may send card data to POST /tokens from their own
	// servers and pages (the product's PCI DSS rule); others only through Kessai's widget and
	// link form.
	PCICompliant bool
	Settings     StoreSettings
	CreatedOn    time.Time
}

// StoreSettings are a store's payment settings, shown to the widget through
// GET /checkout_info and to SDKs as the store's configuration.
type StoreSettings struct {
	CardEnabled     bool     `json:"card_enabled"`
	ThreeDSRequired bool     `json:"three_ds_required"`
	Currencies      []string `json:"currencies"`
	LogoImage       string   `json:"logo_image,omitempty"`
	Theme           Theme    `json:"theme"`
	// ForbiddenCardBrands are the card brands (wasm/card's names) the
	// store refuses to tokenise.
	ForbiddenCardBrands []string `json:"forbidden_card_brands,omitempty"`
	// RecurringType is which recurring tokens the store may make (see
	// RecurringPrivilege); empty is RecurringInfinite, what stores had
	// before the setting existed.
	RecurringType RecurringPrivilege `json:"recurring_type,omitempty"`
	// KonbiniOff and BankTransferOff turn konbini payments and bank
	// transfers off for the store. Both are on unless turned off, as the
	// sandbox's wallets are: a store made before they existed takes them.
	KonbiniOff      bool `json:"konbini_off,omitempty"`
	BankTransferOff bool `json:"bank_transfer_off,omitempty"`
	// MatchAmount decides when a bank transfer's deposits pay its charge
	// ("" is MatchMinimum).
	MatchAmount MatchAmount `json:"match_amount,omitempty"`
}

// TransferMatch is the store's match-amount rule for bank transfers.
func (st StoreSettings) TransferMatch() MatchAmount {
	if st.MatchAmount == "" {
		return MatchMinimum
	}
	return st.MatchAmount
}

// RecurringPrivilege is how far a store may use recurring tokens
// (UnivaPay's recurring_token_privilege).
type RecurringPrivilege string

// The recurring privileges: no recurring tokens at all; only with a usage
// limit; or without one.
const (
	RecurringNone     RecurringPrivilege = "none"
	RecurringBounded  RecurringPrivilege = "bounded"
	RecurringInfinite RecurringPrivilege = "infinite"
)

// Recurring is the store's recurring privilege.
func (st StoreSettings) Recurring() RecurringPrivilege {
	if st.RecurringType == "" {
		return RecurringInfinite
	}
	return st.RecurringType
}

// ForbidsBrand reports whether the store refuses cards of brand.
func (st StoreSettings) ForbidsBrand(brand string) bool {
	for _, b := range st.ForbiddenCardBrands {
		if strings.EqualFold(b, brand) {
			return true
		}
	}
	return false
}

// MaxRefundPercent is how much of a charge its refunds may give back, in
// percent: all of it, never more (CreateRefund).
const MaxRefundPercent = 100

// Theme colours the widget frame so that it matches the merchant's shop.
type Theme struct {
	MainBackground      string `json:"main_background"`
	SecondaryBackground string `json:"secondary_background"`
	MainColor           string `json:"main_color"`
	MainText            string `json:"main_text"`
	PrimaryText         string `json:"primary_text"`
	SecondaryText       string `json:"secondary_text"`
	BaseText            string `json:"base_text"`
	BodyBackground      string `json:"body_background"`
}

// DefaultStoreSettings are what a new store starts with: cards on, no
// mandatory 3-D Secure, the common currencies and a neutral theme.
func DefaultStoreSettings() StoreSettings {
	return StoreSettings{
		CardEnabled:   true,
		RecurringType: RecurringInfinite,
		Currencies:    []string{"JPY", "USD", "EUR"},
		Theme: Theme{
			MainBackground:      "#ffffff",
			SecondaryBackground: "#f5f6f8",
			MainColor:           "#1f5eff",
			MainText:            "#ffffff",
			PrimaryText:         "#1a1d24",
			SecondaryText:       "#5c6370",
			BaseText:            "#1a1d24",
			BodyBackground:      "#f5f6f8",
		},
	}
}

// CheckoutInfo is what the widget needs to know about the store it takes a
// payment for.
type CheckoutInfo struct {
	Store *Store
	Mode  Mode
}
