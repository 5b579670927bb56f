package univapay

import (
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Redirect is where a charge sends the customer back to.
type Redirect struct {
	Endpoint   *string `json:"endpoint,omitempty"`
	RedirectID *string `json:"redirect_id,omitempty"`
}

// ChargeThreeDS is a charge's (or a subscription's) three_ds.
type ChargeThreeDS struct {
	Mode             *string `json:"mode"`
	RedirectEndpoint *string `json:"redirect_endpoint"`
	RedirectID       *string `json:"redirect_id"`
	// Status is where the charge's 3-D Secure is (Kessai's; absent when
	// it has none).
	Status *string `json:"status,omitempty"`
}

// Charge is a charge (UnivaPay's). PHP requires transaction_token_type,
// requested_currency, requested_amount, status, mode and created_on.
type Charge struct {
	ID                       uuid.UUID        `json:"id"`
	StoreID                  uuid.UUID        `json:"store_id"`
	MerchantID               uuid.UUID        `json:"merchant_id"`
	PlatformID               *string          `json:"platform_id"`
	TransactionTokenID       uuid.UUID        `json:"transaction_token_id"`
	TransactionTokenType     string           `json:"transaction_token_type"`
	SubscriptionID           *uuid.UUID       `json:"subscription_id"`
	MerchantTransactionID    *string          `json:"merchant_transaction_id"`
	RequestedAmount          int64            `json:"requested_amount"`
	RequestedCurrency        string           `json:"requested_currency"`
	RequestedAmountFormatted json.Number      `json:"requested_amount_formatted"`
	ChargedAmount            *int64           `json:"charged_amount"`
	ChargedCurrency          *string          `json:"charged_currency"`
	ChargedAmountFormatted   *json.Number     `json:"charged_amount_formatted"`
	FeeAmount                *int64           `json:"fee_amount"`
	FeeCurrency              *string          `json:"fee_currency"`
	FeeAmountFormatted       *json.Number     `json:"fee_amount_formatted"`
	OnlyDirectCurrency       bool             `json:"only_direct_currency"`
	CaptureAt                *Time            `json:"capture_at"`
	CaptureStatus            string           `json:"capture_status"`
	Descriptor               *string          `json:"descriptor"`
	DescriptorPhoneNumber    *string          `json:"descriptor_phone_number"`
	Status                   string           `json:"status"`
	Error                    *PaymentError    `json:"error"`
	Metadata                 payment.Metadata `json:"metadata"`
	Mode                     payment.Mode     `json:"mode"`
	Type                     string           `json:"type"`
	Redirect                 Redirect         `json:"redirect"`
	ThreeDS                  ChargeThreeDS    `json:"three_ds"`
	CreatedOn                Time             `json:"created_on"`
	UpdatedOn                Time             `json:"updated_on"`
}

func captureStatus(ch *payment.Charge) string {
	switch {
	case ch.Status == payment.ChargeSuccessful:
		return "captured"
	case ch.Status == payment.ChargeAuthorized:
		return "authorized"
	}
	return "not_authorized"
}

// ChargeOf shows a charge.
func ChargeOf(ch *payment.Charge) Charge {
	w := Charge{
		ID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, TransactionTokenID: ch.TokenID,
		TransactionTokenType: string(ch.TokenType), SubscriptionID: optionalID(ch.SubscriptionID),
		MerchantTransactionID: optionalString(ch.MerchantTransactionID),
		RequestedAmount:       ch.RequestedAmount, RequestedCurrency: ch.Currency,
		RequestedAmountFormatted: formatted(ch.RequestedAmount, ch.Currency),
		ChargedAmount:            ch.ChargedAmount, ChargedAmountFormatted: formattedPtr(ch.ChargedAmount, ch.Currency),
		OnlyDirectCurrency: ch.OnlyDirectCurrency, CaptureAt: timeOrNull(ch.CaptureAt), CaptureStatus: captureStatus(ch),
		Descriptor: optionalString(ch.Descriptor), Status: string(ch.Status), Error: paymentErrorOf(ch.Error),
		Metadata: metadata(ch.Metadata), Mode: ch.Mode, Type: "normal",
		ThreeDS: ChargeThreeDS{
			Mode: optionalString(ch.ThreeDS.Mode), RedirectEndpoint: optionalString(ch.ThreeDS.RedirectEndpoint),
			RedirectID: optionalString(ch.ThreeDS.RedirectID), Status: optionalString(string(ch.ThreeDS.Status)),
		},
		CreatedOn: Time(ch.CreatedOn), UpdatedOn: Time(ch.UpdatedOn),
	}
	if ch.ChargedAmount != nil {
		cur := ch.Currency
		w.ChargedCurrency = &cur
	}
	if ch.RedirectEndpoint != "" {
		w.Redirect.Endpoint = &ch.RedirectEndpoint
	}
	return w
}
