package api

import (
	"net/http"

	"github.com/kessai/kessai/server/payment"
)

type wireTheme struct {
	Colors wireThemeColors `json:"colors"`
}

type wireThemeColors struct {
	MainBackground      string `json:"main_background"`
	SecondaryBackground string `json:"secondary_background"`
	MainColor           string `json:"main_color"`
	MainText            string `json:"main_text"`
	PrimaryText         string `json:"primary_text"`
	SecondaryText       string `json:"secondary_text"`
	BaseText            string `json:"base_text"`
	BodyBackground      string `json:"body_background"`
}

func toWireTheme(t payment.Theme) wireTheme {
	return wireTheme{Colors: wireThemeColors(t)}
}

// wireCardConfiguration is a store's card settings. Kessai never converts
// currencies (every charge is in its own currency: only_direct_currency),
// checks no card's country or the shopper's IP, sets no card limit and
// always asks for the CVC.
type wireCardConfiguration struct {
	Enabled              bool      `json:"enabled"`
	DebitEnabled         bool      `json:"debit_enabled"`
	PrepaidEnabled       bool      `json:"prepaid_enabled"`
	ThreeDSRequired      bool      `json:"three_ds_required"`
	OnlyDirectCurrency   bool      `json:"only_direct_currency"`
	ForbiddenCardBrands  []string  `json:"forbidden_card_brands"`
	AllowedCountriesByIP *[]string `json:"allowed_countries_by_ip"`
	ForeignCardsAllowed  bool      `json:"foreign_cards_allowed"`
	FailOnNewEmail       bool      `json:"fail_on_new_email"`
	CardLimit            *struct{} `json:"card_limit"`
	AllowEmptyCVV        bool      `json:"allow_empty_cvv"`
}

func toWireCardConfiguration(st payment.StoreSettings) wireCardConfiguration {
	forbidden := st.ForbiddenCardBrands
	if forbidden == nil {
		forbidden = []string{}
	}
	return wireCardConfiguration{
		Enabled: st.CardEnabled, DebitEnabled: st.CardEnabled, PrepaidEnabled: st.CardEnabled,
		ThreeDSRequired: st.ThreeDSRequired, OnlyDirectCurrency: true, ForbiddenCardBrands: forbidden,
		ForeignCardsAllowed: true,
	}
}

type wireEnabled struct {
	Enabled bool `json:"enabled"`
}

type wireSupportedBrand struct {
	PaymentType              string   `json:"payment_type"`
	Brand                    string   `json:"brand"`
	CardBrand                string   `json:"card_brand,omitempty"`
	OnlineBrand              string   `json:"online_brand,omitempty"`
	QRBrand                  string   `json:"qr_brand,omitempty"`
	SupportAuthCapture       bool     `json:"support_auth_capture"`
	RequiresFullName         bool     `json:"requires_full_name"`
	SupportDynamicDescriptor bool     `json:"support_dynamic_descriptor"`
	RequiresCVV              bool     `json:"requires_cvv"`
	CountriesAllowed         []string `json:"countries_allowed"`
	SupportedCurrencies      []string `json:"supported_currencies"`
	CVVAuth                  bool     `json:"cvv_auth"`
	InstallmentCapable       bool     `json:"installment_capable"`
	MCPCapable               bool     `json:"mcp_capable"`
	MCPOnly                  bool     `json:"mcp_only"`
}

// wireConvenience is convenience_configuration: konbini payments on or
// off, and their default period; the time shift is per token
// ({"enabled": false}, as UnivaPay's checkout answers without one).
type wireConvenience struct {
	Enabled             bool          `json:"enabled"`
	Expiration          *string       `json:"expiration"`
	ExpirationTimeShift wireTimeShift `json:"expiration_time_shift"`
}

type wireTimeShift struct {
	Enabled bool `json:"enabled"`
}

// wireBankTransfer is bank_transfer_configuration: bank transfers on or
// off, the store's match-amount rule, the default period and the
// extension limits.
type wireBankTransfer struct {
	Enabled                bool          `json:"enabled"`
	MatchAmount            string        `json:"match_amount"`
	Expiration             string        `json:"expiration"`
	ExpirationTimeShift    wireTimeShift `json:"expiration_time_shift"`
	MaximumExtensionPeriod string        `json:"maximum_extension_period"`
}

func toWireConvenience(st payment.StoreSettings) wireConvenience {
	period := payment.FormatPaymentPeriod(payment.DefaultKonbiniPeriod)
	return wireConvenience{Enabled: !st.KonbiniOff, Expiration: &period}
}

func toWireBankTransfer(st payment.StoreSettings) wireBankTransfer {
	return wireBankTransfer{
		Enabled: !st.BankTransferOff, MatchAmount: string(st.TransferMatch()),
		Expiration:             payment.FormatPaymentPeriod(payment.DefaultTransferPeriod),
		MaximumExtensionPeriod: payment.FormatPaymentPeriod(payment.MaxExpiryExtension),
	}
}

type wireInstallments struct {
	Enabled           bool    `json:"enabled"`
	OnlyWithProcessor bool    `json:"only_with_processor"`
	CardProcessor     *string `json:"card_processor"`
	MinChargeAmount   *int64  `json:"min_charge_amount"`
	MaxPayoutPeriod   *string `json:"max_payout_period"`
}

type wireCVVConfirmation struct {
	Enabled   bool  `json:"enabled"`
	Threshold []any `json:"threshold"`
}

// wireCheckoutInfo is GET /checkout_info (UnivaPay's wire format).
type wireCheckoutInfo struct {
	Mode                               payment.Mode          `json:"mode"`
	RecurringTokenPrivilege            string                `json:"recurring_token_privilege"`
	Name                               string                `json:"name"`
	CardConfiguration                  wireCardConfiguration `json:"card_configuration"`
	SubscriptionConfiguration          wireEnabled           `json:"subscription_configuration"`
	QRScanConfiguration                wireEnabled           `json:"qr_scan_configuration"`
	ConvenienceConfiguration           wireConvenience       `json:"convenience_configuration"`
	InstallmentsConfiguration          wireInstallments      `json:"installments_configuration"`
	CheckoutConfiguration              map[string]any        `json:"checkout_configuration"`
	PaidyPublicKey                     *string               `json:"paidy_public_key"`
	PaidyConfiguration                 wireEnabled           `json:"paidy_configuration"`
	OnlineConfiguration                wireEnabled           `json:"online_configuration"`
	BankTransferConfiguration          wireBankTransfer      `json:"bank_transfer_configuration"`
	RecurringCardChargeCVVConfirmation wireCVVConfirmation   `json:"recurring_card_charge_cvv_confirmation"`
	LogoImage                          *string               `json:"logo_image"`
	Theme                              wireTheme             `json:"theme"`
	SupportedBrands                    []wireSupportedBrand  `json:"supported_brands"`
}

// cardBrands are the card brands the sandbox acquirer accepts.
var cardBrands = []string{"visa", "mastercard", "jcb", "american_express", "diners_club", "discover", "unionpay", "maestro"}

func (s *Server) getCheckoutInfo(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	info, err := s.svc.Merchants.CheckoutInfo(r.Context(), c)
	if err != nil {
		return 0, nil, err
	}
	st := info.Store.Settings
	out := wireCheckoutInfo{
		Mode:                               info.Mode,
		RecurringTokenPrivilege:            string(st.Recurring()),
		Name:                               info.Store.Name,
		CardConfiguration:                  toWireCardConfiguration(st),
		SubscriptionConfiguration:          wireEnabled{Enabled: true},
		CheckoutConfiguration:              map[string]any{},
		RecurringCardChargeCVVConfirmation: wireCVVConfirmation{Threshold: []any{}},
		LogoImage:                          optionalString(st.LogoImage),
		Theme:                              toWireTheme(st.Theme),
		SupportedBrands:                    []wireSupportedBrand{},
		ConvenienceConfiguration:           toWireConvenience(st),
		BankTransferConfiguration:          toWireBankTransfer(st),
	}
	if st.CardEnabled {
		for _, b := range cardBrands {
			if st.ForbidsBrand(b) {
				continue
			}
			out.SupportedBrands = append(out.SupportedBrands, wireSupportedBrand{
				PaymentType: "card", Brand: b, CardBrand: b, SupportAuthCapture: true,
				SupportDynamicDescriptor: true, RequiresCVV: true, CountriesAllowed: []string{},
				SupportedCurrencies: st.Currencies,
			})
		}
	}
	// The online wallets and merchant-presented QR codes the sandbox
	// simulates: paid at once in the store's currencies, never
	// authorised alone.
	out.OnlineConfiguration.Enabled = true
	for _, b := range payment.OnlineBrands {
		out.SupportedBrands = append(out.SupportedBrands, wireSupportedBrand{
			PaymentType: payment.PaymentTypeOnline, Brand: b, OnlineBrand: b,
			CountriesAllowed: []string{}, SupportedCurrencies: st.Currencies,
		})
	}
	for _, b := range payment.QRMerchantBrands {
		out.SupportedBrands = append(out.SupportedBrands, wireSupportedBrand{
			PaymentType: payment.PaymentTypeQRMerchant, Brand: b, QRBrand: b,
			CountriesAllowed: []string{}, SupportedCurrencies: st.Currencies,
		})
	}
	// Konbini payments and bank transfers, in yen, unless the store
	// turned them off: one row per store, and one per bank.
	yen := []string{"JPY"}
	if !st.KonbiniOff {
		for _, b := range payment.ConvenienceStores {
			out.SupportedBrands = append(out.SupportedBrands, wireSupportedBrand{
				PaymentType: payment.PaymentTypeKonbini, Brand: b, RequiresFullName: true,
				CountriesAllowed: []string{"JP"}, SupportedCurrencies: yen,
			})
		}
	}
	if !st.BankTransferOff {
		for _, b := range payment.BankTransferBrands {
			if b == payment.TestBank && info.Mode != payment.ModeTest {
				continue
			}
			out.SupportedBrands = append(out.SupportedBrands, wireSupportedBrand{
				PaymentType: payment.PaymentTypeBankTransfer, Brand: b,
				CountriesAllowed: []string{"JP"}, SupportedCurrencies: yen,
			})
		}
	}
	return http.StatusOK, out, nil
}
