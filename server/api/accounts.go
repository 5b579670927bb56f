package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

type wireMerchant struct {
	ID                 uuid.UUID         `json:"id"`
	VerificationDataID *uuid.UUID        `json:"verification_data_id"`
	Name               string            `json:"name"`
	Email              string            `json:"email"`
	Verified           bool              `json:"verified"`
	CreatedOn          univapay.Time     `json:"created_on"`
	Configuration      wireConfiguration `json:"configuration"`
}

// toWireMerchant shows a merchant. Kessai keeps settings per store; a
// merchant's configuration is what each of its new stores starts with.
func toWireMerchant(m *payment.Merchant) wireMerchant {
	return wireMerchant{
		ID: m.ID, Name: m.Name, Email: m.Email, Verified: m.Verified, CreatedOn: univapay.Time(m.CreatedOn),
		Configuration: toWireConfiguration(payment.DefaultStoreSettings()),
	}
}

func (s *Server) getMe(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	m, err := s.svc.Merchants.Me(r.Context(), c)
	return answer(http.StatusOK, m, err, toWireMerchant)
}

// getMeByID is GET /me/{id}, where PHP's Merchant->fetch() reads the
// merchant it came from.
func (s *Server) getMeByID(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	m, err := s.svc.Merchants.MeByID(r.Context(), c, ids.id)
	return answer(http.StatusOK, m, err, toWireMerchant)
}

// wireMoney is an amount with its currency (a configuration's bounds).
type wireMoney struct {
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
}

type wireUserTransactions struct {
	Enabled        bool `json:"enabled"`
	NotifyCustomer bool `json:"notify_customer"`
}

type wireQRScanConfiguration struct {
	Enabled                 bool     `json:"enabled"`
	ForbiddenQRScanGateways []string `json:"forbidden_qr_scan_gateways"`
}

type wireRecurringConfiguration struct {
	RecurringType             payment.RecurringPrivilege `json:"recurring_type"`
	ChargeWaitPeriod          *string                    `json:"charge_wait_period"`
	CardChargeCVVConfirmation wireCVVConfirmation        `json:"card_charge_cvv_confirmation"`
}

type wireLimitChargeByCard struct {
	QuantityOfCharges int    `json:"quantity_of_charges"`
	DurationWindow    string `json:"duration_window"`
}

type wireSecurityConfiguration struct {
	InspectSuspiciousLoginAfter    *string                `json:"inspect_suspicious_login_after"`
	RefundPercentLimit             int                    `json:"refund_percent_limit"`
	LimitChargeByCardConfiguration *wireLimitChargeByCard `json:"limit_charge_by_card_configuration"`
	ConfirmationRequired           bool                   `json:"confirmation_required"`
}

// wireCardBrandPercentFees is the fee Kessai takes per card brand: none.
type wireCardBrandPercentFees struct {
	Visa            float64 `json:"visa"`
	AmericanExpress float64 `json:"american_express"`
	Mastercard      float64 `json:"mastercard"`
	Maestro         float64 `json:"maestro"`
	Discover        float64 `json:"discover"`
	JCB             float64 `json:"jcb"`
	DinersClub      float64 `json:"diners_club"`
	UnionPay        float64 `json:"union_pay"`
}

// wireConfiguration is the configuration of a merchant or a store (GET
// /me, GET /stores/{id}, the items of GET /stores). PHP's SDK requires
// nine of its objects (user transactions, card, QR scan, convenience,
// Paidy, recurring token with its card_charge_cvv_confirmation, security,
// installments, card brand fees) and fails at the first one missing. Each
// value says what Kessai does: it takes no fees, sends no e-mails, has no
// payouts or installments, and bounds charges by
// currency; the card, recurring, konbini and bank-transfer settings are
// the store's own. theme and
// logo_image are the widget's, as in GET /checkout_info.
type wireConfiguration struct {
	PercentFee                    float64                    `json:"percent_fee"`
	FlatFees                      []wireMoney                `json:"flat_fees"`
	LogoURL                       *string                    `json:"logo_url"`
	Country                       *string                    `json:"country"`
	Language                      *string                    `json:"language"`
	DisplayTimeZone               *string                    `json:"display_time_zone"`
	MinTransferPayout             *wireMoney                 `json:"min_transfer_payout"`
	MinimumChargeAmounts          []wireMoney                `json:"minimum_charge_amounts"`
	MaximumChargeAmounts          []wireMoney                `json:"maximum_charge_amounts"`
	TransferSchedule              *struct{}                  `json:"transfer_schedule"`
	UserTransactionsConfiguration wireUserTransactions       `json:"user_transactions_configuration"`
	CardConfiguration             wireCardConfiguration      `json:"card_configuration"`
	QRScanConfiguration           wireQRScanConfiguration    `json:"qr_scan_configuration"`
	ConvenienceConfiguration      wireConvenience            `json:"convenience_configuration"`
	BankTransferConfiguration     wireBankTransfer           `json:"bank_transfer_configuration"`
	PaidyConfiguration            wireEnabled                `json:"paidy_configuration"`
	OnlineConfiguration           wireEnabled                `json:"online_configuration"`
	RecurringTokenConfiguration   wireRecurringConfiguration `json:"recurring_token_configuration"`
	SecurityConfiguration         wireSecurityConfiguration  `json:"security_configuration"`
	InstallmentsConfiguration     wireInstallments           `json:"installments_configuration"`
	CardBrandPercentFees          wireCardBrandPercentFees   `json:"card_brand_percent_fees"`
	Theme                         wireTheme                  `json:"theme"`
	LogoImage                     *string                    `json:"logo_image"`
}

func toWireConfiguration(st payment.StoreSettings) wireConfiguration {
	w := wireConfiguration{
		FlatFees:             []wireMoney{},
		LogoURL:              optionalString(st.LogoImage),
		MinimumChargeAmounts: []wireMoney{},
		MaximumChargeAmounts: []wireMoney{},
		CardConfiguration:    toWireCardConfiguration(st),
		QRScanConfiguration:  wireQRScanConfiguration{ForbiddenQRScanGateways: []string{}},
		RecurringTokenConfiguration: wireRecurringConfiguration{
			RecurringType:             st.Recurring(),
			CardChargeCVVConfirmation: wireCVVConfirmation{Threshold: []any{}},
		},
		SecurityConfiguration:     wireSecurityConfiguration{RefundPercentLimit: payment.MaxRefundPercent},
		Theme:                     toWireTheme(st.Theme),
		LogoImage:                 optionalString(st.LogoImage),
		ConvenienceConfiguration:  toWireConvenience(st),
		BankTransferConfiguration: toWireBankTransfer(st),
	}
	for _, code := range st.Currencies {
		if cur, ok := payment.LookupCurrency(code); ok {
			w.MinimumChargeAmounts = append(w.MinimumChargeAmounts, wireMoney{cur.MinAmount, cur.Code})
			w.MaximumChargeAmounts = append(w.MaximumChargeAmounts, wireMoney{cur.MaxAmount, cur.Code})
		}
	}
	return w
}

type wireStore struct {
	ID            uuid.UUID         `json:"id"`
	MerchantID    uuid.UUID         `json:"merchant_id"`
	Name          string            `json:"name"`
	CreatedOn     univapay.Time     `json:"created_on"`
	Configuration wireConfiguration `json:"configuration"`
}

func toWireStore(st *payment.Store) wireStore {
	return wireStore{
		ID: st.ID, MerchantID: st.MerchantID, Name: st.Name, CreatedOn: univapay.Time(st.CreatedOn),
		Configuration: toWireConfiguration(st.Settings),
	}
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Server) listStores(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Merchants.Stores(r.Context(), c, p)
	return answer(http.StatusOK, page, err, listOf(toWireStore))
}

func (s *Server) getStore(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	st, err := s.svc.Merchants.Store(r.Context(), c, ids.store)
	return answer(http.StatusOK, st, err, toWireStore)
}

type wireCustomerID struct {
	CustomerID string `json:"customer_id"`
}

func (s *Server) createCustomerID(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireCustomerID
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	id, err := s.svc.Merchants.CustomerID(r.Context(), c, ids.store, req.CustomerID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wireCustomerID{CustomerID: id.String()}, nil
}
