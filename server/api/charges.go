package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
	"github.com/kessai/kessai/wasm/card"
)

// paymentRoutes are the card-payment routes: tokens, charges, captures,
// refunds, cancels and the transaction history.
func (s *Server) paymentRoutes(r *mux.Router) {
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	r.HandleFunc("/tokens", s.authed(s.createToken)).Methods(post)
	r.HandleFunc("/tokens", s.authed(s.listTokens)).Methods(get)
	r.HandleFunc("/stores/{storeId}/tokens", s.authed(s.listTokens)).Methods(get)
	r.HandleFunc("/stores/{storeId}/tokens/{id}", s.authed(s.getToken)).Methods(get)
	r.HandleFunc("/stores/{storeId}/tokens/{id}", s.authed(s.updateToken)).Methods(patch)
	r.HandleFunc("/stores/{storeId}/tokens/{id}", s.authed(s.deleteToken)).Methods(del)

	r.HandleFunc("/charges", s.authed(s.createCharge)).Methods(post)
	r.HandleFunc("/charges", s.authed(s.listCharges)).Methods(get)
	// GET /charges/{id} and /stores/{storeId}/charges/{id} are the router's
	// first routes (routes).
	r.HandleFunc("/stores/{storeId}/charges", s.authed(s.listCharges)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{id}", s.authed(s.updateCharge)).Methods(patch)
	r.HandleFunc("/stores/{storeId}/charges/{id}/capture", s.authed(s.captureCharge)).Methods(post)

	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/refunds", s.authed(s.createRefund)).Methods(post)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/refunds", s.authed(s.listRefunds)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/refunds/{id}", s.authed(s.getRefund)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/refunds/{id}", s.authed(s.updateRefund)).Methods(patch)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/cancels", s.authed(s.createCancel)).Methods(post)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/cancels", s.authed(s.listCancels)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/cancels/{id}", s.authed(s.getCancel)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{chargeId}/cancels/{id}", s.authed(s.updateCancel)).Methods(patch)

	r.HandleFunc("/transaction_history", s.authed(s.listTransactions)).Methods(get)
	r.HandleFunc("/stores/{storeId}/transaction_history", s.authed(s.listTransactions)).Methods(get)
}

// wireChargeThreeDSInput is a new charge's three_ds: the merchant's wishes
// for Kessai's 3-D Secure, or the six fields of its own (external MPI).
type wireChargeThreeDSInput struct {
	Mode                string `json:"mode"`
	RedirectEndpoint    string `json:"redirect_endpoint"`
	RedirectID          string `json:"redirect_id"`
	AuthenticationValue string `json:"authentication_value"`
	ECI                 string `json:"eci"`
	DSTransactionID     string `json:"ds_transaction_id"`
	ServerTransactionID string `json:"server_transaction_id"`
	MessageVersion      string `json:"message_version"`
	TransactionStatus   string `json:"transaction_status"`
}

// domain is what the three_ds asks for (nil, nil when it is absent); a
// subscription's first charge takes it as a charge does.
func (t *wireChargeThreeDSInput) domain() (*payment.ThreeDSSettings, *payment.ExternalThreeDSInput) {
	if t == nil {
		return nil, nil
	}
	return &payment.ThreeDSSettings{Mode: t.Mode, RedirectEndpoint: t.RedirectEndpoint, RedirectID: t.RedirectID},
		&payment.ExternalThreeDSInput{
			AuthenticationValue: t.AuthenticationValue, ECI: t.ECI, DSTransactionID: t.DSTransactionID,
			ServerTransactionID: t.ServerTransactionID, MessageVersion: t.MessageVersion, TransactionStatus: t.TransactionStatus,
		}
}

type wireNewCharge struct {
	TransactionTokenID    string                  `json:"transaction_token_id"`
	Amount                amountJSON              `json:"amount"`
	Currency              string                  `json:"currency"`
	Capture               *bool                   `json:"capture"`
	CaptureAt             *inputTime              `json:"capture_at"`
	OnlyDirectCurrency    bool                    `json:"only_direct_currency"`
	Descriptor            string                  `json:"descriptor"`
	Metadata              json.RawMessage         `json:"metadata"`
	ThreeDS               *wireChargeThreeDSInput `json:"three_ds"`
	Redirect              *wireRedirectInput      `json:"redirect"`
	MerchantTransactionID string                  `json:"merchant_transaction_id"`
	IPAddress             string                  `json:"ip_address"`
}

type wireRedirectInput struct {
	Endpoint string `json:"endpoint"`
}

func (s *Server) createCharge(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireNewCharge
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	p := payment.NewCharge{
		Amount: req.Amount.Value, Currency: req.Currency, Capture: req.Capture, CaptureAt: req.CaptureAt.ptr(),
		OnlyDirectCurrency: req.OnlyDirectCurrency,
		Descriptor:         req.Descriptor, MerchantTransactionID: req.MerchantTransactionID, IPAddress: req.IPAddress,
	}
	if req.TransactionTokenID != "" {
		id, err := uuid.Parse(req.TransactionTokenID)
		if err != nil {
			return 0, nil, payment.Invalid("transaction_token_id", payment.ReasonInvalidUUID)
		}
		p.TokenID = id
	}
	var err error
	if p.Metadata, err = payment.ParseMetadata(req.Metadata, "metadata"); err != nil {
		return 0, nil, err
	}
	p.ThreeDS, p.ExternalThreeDS = req.ThreeDS.domain()
	if req.Redirect != nil {
		p.RedirectEndpoint = req.Redirect.Endpoint
	}
	p.Idempotency = idempotencyRef(r)
	return chargeCreated(s.svc.Charging.CreateCharge(r.Context(), c, p))
}

// chargeCreated is the answer of POST /charges: also a retry's, after a
// crash, with the charge as it is now (effectAnswer).
func chargeCreated(ch *payment.Charge, err error) (int, any, error) {
	return answer(http.StatusCreated, ch, err, univapay.ChargeOf)
}

// pollWaitOf is how long a read may be held: ?polling=true asks for a
// long poll.
func (s *Server) pollWaitOf(r *http.Request) time.Duration {
	if newQuery(r).polling() {
		return s.pollWait
	}
	return 0
}

func (s *Server) getCharge(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	ch, err := s.svc.Charging.Charge(r.Context(), c, ids.store, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, ch, err, univapay.ChargeOf)
}

var chargeStatuses = []string{"pending", "awaiting", "authorized", "successful", "failed", "error", "canceled"}

func (s *Server) listCharges(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	q := newQuery(r)
	f := payment.ChargeFilter{
		Mode:       q.mode(),
		Status:     payment.ChargeStatus(q.oneOf("status", chargeStatuses...)),
		Currency:   strings.ToUpper(q.str("currency")),
		From:       q.time("from"),
		To:         q.time("to"),
		AmountFrom: q.int64("amount_from"),
		AmountTo:   q.int64("amount_to"),
		TokenID:    q.id("transaction_token_id"),
		LastFour:   q.str("last_four"),
		Email:      q.str("email"),
		Cardholder: q.str("name"),
		ExpMonth:   q.intValue("exp_month"),
		ExpYear:    q.intValue("exp_year"),
		Phone:      q.phone("phone"),
	}
	if f.ExpYear != nil {
		y := card.NormalizeYear(*f.ExpYear)
		f.ExpYear = &y
	}
	// card_number names one card by its BIN and last four, which is all
	// Kessai keeps in the clear; a last_four that contradicts it is a
	// mistake. It is never echoed, not even in an error.
	if n := q.str("card_number"); n != "" {
		bin, last := card.BIN(n), card.LastFour(n)
		if bin == "" || strings.Trim(n, "0123456789 -") != "" || (f.LastFour != "" && f.LastFour != last) {
			q.v.Add("card_number", payment.ReasonInvalidFormat)
		} else {
			f.CardBIN, f.LastFour = bin, last
		}
	}
	f.MetadataKey, f.MetadataValue = q.metadata()
	if err := q.err(); err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Charging.Charges(r.Context(), c, ids.store, f, p)
	return answer(http.StatusOK, page, err, listOf(univapay.ChargeOf))
}

type wireMetadataUpdate struct {
	Metadata json.RawMessage `json:"metadata"`
}

// decodeMetadata reads a body whose only field is metadata (PATCH of a
// charge or cancel, a new cancel).
func (s *Server) decodeMetadata(r *http.Request) (payment.Metadata, error) {
	var req wireMetadataUpdate
	if err := s.decode(r, &req); err != nil {
		return nil, err
	}
	return payment.ParseMetadata(req.Metadata, "metadata")
}

func (s *Server) updateCharge(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	md, err := s.decodeMetadata(r)
	if err != nil {
		return 0, nil, err
	}
	ch, err := s.svc.Charging.UpdateCharge(r.Context(), c, ids.store, ids.id, md)
	return answer(http.StatusOK, ch, err, univapay.ChargeOf)
}

type wireCapture struct {
	Amount   amountJSON `json:"amount"`
	Currency string     `json:"currency"`
}

// captureCharge answers an empty 201, as the Java SDK expects; the body
// may be a JSON null (PHP) meaning "capture everything".
func (s *Server) captureCharge(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireCapture
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	return captureRequested(s.svc.Charging.CaptureCharge(r.Context(), c, ids.store, ids.id, payment.ChargeCapture{
		Amount: req.Amount.ptr(), Currency: req.Currency, Idempotency: idempotencyRef(r),
	}))
}

// captureRequested is the answer of a capture, an empty 201: also a
// retry's, after a crash (effectAnswer).
func captureRequested(err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, nil, nil
}
