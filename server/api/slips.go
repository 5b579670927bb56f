package api

import (
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// slipRoutes are the routes of konbini payments and bank transfers: the
// payment deadline and its extension, a bank transfer's ledger, and the
// sandbox's test helpers that stand for the shopper at the counter or the
// bank.
func (s *Server) slipRoutes(r *mux.Router) {
	get, post := http.MethodGet, http.MethodPost
	r.HandleFunc("/stores/{storeId}/charges/{id}/expiry/latest", s.authed(s.chargeExpiry)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{id}/expiry", s.authed(s.extendExpiry)).Methods(post)
	r.HandleFunc("/stores/{storeId}/charges/{id}/bank_transfer_ledgers", s.authed(s.transferLedger)).Methods(get)
	r.HandleFunc("/stores/{storeId}/charges/{id}/test_helpers/pay", s.authed(s.simulate(payment.ActionPay))).Methods(post)
	r.HandleFunc("/stores/{storeId}/charges/{id}/test_helpers/deposit", s.authed(s.simulate(payment.ActionDeposit))).Methods(post)
	r.HandleFunc("/stores/{storeId}/charges/{id}/test_helpers/expire", s.authed(s.simulate(payment.ActionExpire))).Methods(post)
}

func (s *Server) chargeExpiry(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	e, err := s.svc.Charging.ChargeExpiry(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, e, err, univapay.ExpiryOf)
}

// wireExpiryExtension is the body of POST …/charges/{id}/expiry: a
// period to add to the deadline (ISO 8601: P3D, PT72H), or the new
// deadline itself; never both. No SDK has this route: its shape follows
// the extension errors they name (EITHER_PERIOD_OR_DATE).
type wireExpiryExtension struct {
	ExpirationPeriod *string    `json:"expiration_period"`
	ExpirationDate   *inputTime `json:"expiration_date"`
}

func (s *Server) extendExpiry(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireExpiryExtension
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	x := payment.ExpiryExtension{Date: req.ExpirationDate.ptr()}
	if req.ExpirationPeriod != nil {
		d, ok := payment.ParsePaymentPeriod(*req.ExpirationPeriod)
		if !ok {
			return 0, nil, payment.Invalid("expiration_period", payment.ReasonInvalidFormat)
		}
		x.Period = &d
	}
	e, err := s.svc.Charging.ExtendExpiry(r.Context(), c, ids.store, ids.id, x)
	return answer(http.StatusOK, e, err, univapay.ExpiryOf)
}

func (s *Server) transferLedger(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	l, err := s.svc.Charging.TransferLedger(r.Context(), c, ids.store, ids.id, p)
	return answer(http.StatusOK, l, err, func(l *payment.TransferLedger) univapay.List[univapay.TransferLedgerEntry] {
		return univapay.ListOf(l.Page, func(e *payment.TransferEntry) univapay.TransferLedgerEntry {
			return univapay.TransferLedgerEntryOf(e, l.Account)
		})
	})
}

// wireDeposit is the body of POST …/test_helpers/deposit.
type wireDeposit struct {
	Amount amountJSON `json:"amount"`
}

// helperWait is how long a test helper waits for a charge the worker has
// not yet opened.
const helperWait = 10 * time.Second

func (s *Server) simulate(action payment.ApprovalAction) endpoint {
	return func(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
		var amount int64
		if action == payment.ActionDeposit {
			var req wireDeposit
			if err := s.decode(r, &req); err != nil {
				return 0, nil, err
			}
			if !req.Amount.Set {
				return 0, nil, payment.Invalid("amount", payment.ReasonRequired)
			}
			amount = req.Amount.Value
		}
		ch, err := s.svc.Charging.SimulateShopper(r.Context(), c, ids.store, ids.id, action, amount, helperWait)
		return answer(http.StatusOK, ch, err, univapay.ChargeOf)
	}
}
