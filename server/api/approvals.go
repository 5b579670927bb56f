package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// approvalRoutes are the routes of payments the shopper approves away
// from the merchant's page: the issuer tokens of online wallets and of
// 3-D Secure, the QR code of merchant-presented QR charges, and 3-D
// Secure on tokens.
func (s *Server) approvalRoutes(r *mux.Router) {
	get, post, del := http.MethodGet, http.MethodPost, http.MethodDelete
	r.HandleFunc("/stores/{storeId}/charges/{id}/issuer_token", s.authed(s.chargeIssuerToken)).Methods(get)
	// The PHP SDK's spelling of the same path.
	r.HandleFunc("/stores/{storeId}/charges/{id}/issuerToken", s.authed(s.chargeIssuerToken)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{id}/three_ds/issuer_token", s.authed(s.chargeThreeDSIssuerToken)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{id}/qr", s.authed(s.chargeQR)).Methods(get)
	r.HandleFunc("/stores/{storeId}/tokens/{id}/three_ds", s.authed(s.enableTokenThreeDS)).Methods(post)
	r.HandleFunc("/stores/{storeId}/tokens/{id}/three_ds", s.authed(s.disableTokenThreeDS)).Methods(del)
	r.HandleFunc("/stores/{storeId}/tokens/{id}/three_ds/issuer_token", s.authed(s.tokenThreeDSIssuerToken)).Methods(get)
}

// wireIssuerToken is an issuer token (UnivaPay's). The PHP SDK requires
// call_method and payment_type; content_type is only 3-D Secure's.
type wireIssuerToken struct {
	IssuerToken string            `json:"issuer_token"`
	CallMethod  string            `json:"call_method"`
	ContentType *string           `json:"content_type,omitempty"`
	Payload     map[string]string `json:"payload"`
	PaymentType string            `json:"payment_type"`
	// A bank transfer's account (the OpenAPI document's issuer token),
	// with the bank's code and name besides.
	AccountID         *string `json:"account_id,omitempty"`
	BankCode          *string `json:"bank_code,omitempty"`
	BankName          *string `json:"bank_name,omitempty"`
	BranchCode        *string `json:"branch_code,omitempty"`
	BranchName        *string `json:"branch_name,omitempty"`
	AccountType       *string `json:"account_type,omitempty"`
	AccountNumber     *string `json:"account_number,omitempty"`
	AccountHolderName *string `json:"account_holder_name,omitempty"`
}

func toWireIssuerToken(it *payment.IssuerToken) wireIssuerToken {
	w := wireIssuerToken{
		IssuerToken: it.IssuerToken, CallMethod: it.CallMethod, ContentType: optionalString(it.ContentType),
		Payload: it.Payload, PaymentType: it.PaymentType,
	}
	if va := it.Account; va != nil {
		w.AccountID, w.BankCode, w.BankName = optionalString(va.AccountID), optionalString(va.BankCode), optionalString(va.BankName)
		w.BranchCode, w.BranchName = optionalString(va.BranchCode), optionalString(va.BranchName)
		w.AccountType, w.AccountNumber = optionalString(va.AccountType), optionalString(va.AccountNumber)
		w.AccountHolderName = optionalString(va.AccountHolderName)
	}
	return w
}

func (s *Server) chargeIssuerToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	it, err := s.svc.Charging.ChargeIssuerToken(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, it, err, toWireIssuerToken)
}

func (s *Server) chargeThreeDSIssuerToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	it, err := s.svc.Charging.ChargeThreeDSIssuerToken(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, it, err, toWireIssuerToken)
}

func (s *Server) tokenThreeDSIssuerToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	it, err := s.svc.Tokens.TokenThreeDSIssuerToken(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, it, err, toWireIssuerToken)
}

// wireChargeQR is a merchant-presented QR code (the Java SDK's fixture).
type wireChargeQR struct {
	Ready      bool    `json:"ready"`
	QRImageURL *string `json:"qr_image_url"`
}

func (s *Server) chargeQR(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	qr, err := s.svc.Charging.ChargeQR(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, qr, err, func(q *payment.ChargeQR) wireChargeQR {
		return wireChargeQR{Ready: q.Ready, QRImageURL: optionalString(q.ImageURL)}
	})
}

// wireTokenThreeDSRequest is the body of POST …/tokens/{id}/three_ds; it
// may be empty.
type wireTokenThreeDSRequest struct {
	Mode             string `json:"mode"`
	RedirectEndpoint string `json:"redirect_endpoint"`
	RedirectID       string `json:"redirect_id"`
}

func (s *Server) enableTokenThreeDS(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireTokenThreeDSRequest
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	tok, err := s.svc.Tokens.EnableTokenThreeDS(r.Context(), c, ids.store, ids.id, payment.TokenThreeDSRequest{
		Mode: req.Mode, RedirectEndpoint: req.RedirectEndpoint, RedirectID: req.RedirectID,
	})
	return answer(http.StatusOK, tok, err, univapay.TokenOf)
}

// disableTokenThreeDS answers the token as it is now: the PHP SDK's
// enableThreeDS(false) parses the answer as a token, and univapay-node's
// disableThreeDs resolves to one.
func (s *Server) disableTokenThreeDS(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	if err := s.svc.Tokens.DisableTokenThreeDS(r.Context(), c, ids.store, ids.id); err != nil {
		return 0, nil, err
	}
	tok, err := s.svc.Tokens.Token(r.Context(), c, ids.store, ids.id, 0)
	return answer(http.StatusOK, tok, err, univapay.TokenOf)
}
