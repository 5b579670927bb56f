package univapay

import (
	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Phone is a billing address's phone number.
type Phone struct {
	CountryCode int    `json:"country_code"`
	LocalNumber string `json:"local_number"`
}

// Billing is a card token's billing address.
type Billing struct {
	Line1       *string `json:"line1"`
	Line2       *string `json:"line2"`
	State       *string `json:"state"`
	City        *string `json:"city"`
	Country     *string `json:"country"`
	Zip         *string `json:"zip"`
	PhoneNumber *Phone  `json:"phone_number"`
}

func billingOf(b payment.Billing) Billing {
	w := Billing{
		Line1: optionalString(b.Line1), Line2: optionalString(b.Line2), State: optionalString(b.State),
		City: optionalString(b.City), Country: optionalString(b.Country), Zip: optionalString(b.Zip),
	}
	if b.PhoneNumber != nil {
		w.PhoneNumber = &Phone{CountryCode: b.PhoneNumber.CountryCode, LocalNumber: b.PhoneNumber.LocalNumber}
	}
	return w
}

// Card is what a card token shows of its card: the BIN and the last four
// digits, never the number.
type Card struct {
	Cardholder string  `json:"cardholder"`
	ExpMonth   int     `json:"exp_month"`
	ExpYear    int     `json:"exp_year"`
	CardBIN    string  `json:"card_bin"`
	LastFour   string  `json:"last_four"`
	Brand      string  `json:"brand"`
	CardType   string  `json:"card_type"`
	Country    *string `json:"country"`
	Category   *string `json:"category"`
	Issuer     *string `json:"issuer"`
	SubBrand   string  `json:"sub_brand"`
}

// CVVAuthorize is a card token's CVV authorisation.
type CVVAuthorize struct {
	Enabled       bool    `json:"enabled"`
	Status        *string `json:"status"`
	ChargeID      *string `json:"charge_id"`
	CredentialsID *string `json:"credentials_id"`
	Currency      *string `json:"currency"`
}

// TokenThreeDS is a card token's 3-D Secure.
type TokenThreeDS struct {
	Enabled          bool    `json:"enabled"`
	Status           *string `json:"status"`
	RedirectEndpoint *string `json:"redirect_endpoint"`
	RedirectID       *string `json:"redirect_id"`
	Error            any     `json:"error"`
	Exempted         *bool   `json:"exempted"`
}

// CardData is a card token's data.
type CardData struct {
	Card         Card         `json:"card"`
	Billing      Billing      `json:"billing"`
	CVVAuthorize CVVAuthorize `json:"cvv_authorize"`
	ThreeDS      TokenThreeDS `json:"three_ds"`
}

// Token is a transaction token (UnivaPay's). PHP's SDK requires
// data.card and data.cvv_authorize on card tokens.
type Token struct {
	ID          uuid.UUID        `json:"id"`
	StoreID     uuid.UUID        `json:"store_id"`
	MerchantID  uuid.UUID        `json:"merchant_id"`
	PlatformID  *string          `json:"platform_id"`
	Email       string           `json:"email"`
	PaymentType string           `json:"payment_type"`
	Active      bool             `json:"active"`
	Mode        payment.Mode     `json:"mode"`
	Type        string           `json:"type"`
	UsageLimit  *string          `json:"usage_limit"`
	Confirmed   *bool            `json:"confirmed"`
	IPAddress   *string          `json:"ip_address"`
	Metadata    payment.Metadata `json:"metadata"`
	CreatedOn   Time             `json:"created_on"`
	UpdatedOn   Time             `json:"updated_on"`
	LastUsedOn  *Time            `json:"last_used_on"`
	// Data is CardData, OnlineData, QRData, KonbiniData or
	// BankTransferData, as the payment type has it.
	Data any `json:"data"`
}

// OnlineData is an online token's data; the issuer token is the
// charge's (GET …/charges/{id}/issuer_token), never the token's.
type OnlineData struct {
	Brand              string  `json:"brand"`
	CallMethod         string  `json:"call_method"`
	OSType             *string `json:"os_type"`
	UserIdentifier     *string `json:"user_identifier"`
	IssuerToken        *string `json:"issuer_token"`
	IssuerTokenPayload *string `json:"issuer_token_payload"`
}

// QRData is a QR-merchant token's data.
type QRData struct {
	Brand   string  `json:"brand"`
	Gateway *string `json:"gateway"`
}

func tokenThreeDSOf(t payment.ThreeDSSettings) TokenThreeDS {
	w := TokenThreeDS{
		Enabled: t.Enabled, Status: optionalString(string(t.Status)), RedirectEndpoint: optionalString(t.RedirectEndpoint),
		RedirectID: optionalString(t.RedirectID), Error: paymentErrorOf(t.Error),
	}
	if t.Exempted {
		w.Exempted = &t.Exempted
	}
	return w
}

// TokenOf shows a transaction token.
func TokenOf(t *payment.TransactionToken) Token {
	w := Token{
		ID: t.ID, StoreID: t.StoreID, MerchantID: t.MerchantID, Email: t.Email, PaymentType: t.PaymentType,
		Active: t.Active, Mode: t.Mode, Type: string(t.Type), UsageLimit: optionalString(t.UsageLimit),
		IPAddress: optionalString(t.IPAddress), Metadata: metadata(t.Metadata),
		CreatedOn: Time(t.CreatedOn), UpdatedOn: Time(t.UpdatedOn), LastUsedOn: timeOrNull(t.LastUsedOn),
	}
	switch t.PaymentType {
	case payment.PaymentTypeOnline:
		w.Data = OnlineData{
			Brand: t.Data.Brand, CallMethod: t.Data.CallMethod, OSType: optionalString(t.Data.OSType),
			UserIdentifier: optionalString(t.Data.UserIdentifier),
		}
		return w
	case payment.PaymentTypeQRMerchant:
		w.Data = QRData{Brand: t.Data.Brand}
		return w
	case payment.PaymentTypeKonbini:
		w.Data = konbiniDataOf(t.Data)
		return w
	case payment.PaymentTypeBankTransfer:
		w.Data = bankTransferDataOf(t.Data)
		return w
	}
	w.Data = CardData{
		Card: Card{
			Cardholder: t.Card.Cardholder, ExpMonth: t.Card.ExpMonth, ExpYear: t.Card.ExpYear,
			CardBIN: t.Card.BIN, LastFour: t.Card.LastFour, Brand: t.Card.Brand, CardType: "credit", SubBrand: "none",
		},
		Billing: billingOf(t.Card.Billing),
		CVVAuthorize: CVVAuthorize{
			Enabled: t.CVVAuthorize.Enabled, Status: optionalString(string(t.CVVAuthorize.Status)),
			ChargeID: optionalUUIDString(t.CVVAuthorize.AuthorizationID), Currency: optionalString(t.CVVAuthorize.Currency),
		},
		ThreeDS: tokenThreeDSOf(t.ThreeDS),
	}
	return w
}
