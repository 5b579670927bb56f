package api

import (
	"encoding/json"
	"net/http"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

type wireNewRefund struct {
	Amount   amountJSON      `json:"amount"`
	Currency string          `json:"currency"`
	Reason   string          `json:"reason"`
	Message  string          `json:"message"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *Server) createRefund(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireNewRefund
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	md, err := payment.ParseMetadata(req.Metadata, "metadata")
	if err != nil {
		return 0, nil, err
	}
	return refundCreated(s.svc.Refunds.CreateRefund(r.Context(), c, ids.store, ids.charge, payment.NewRefund{
		Amount: req.Amount.Value, Currency: req.Currency, Reason: req.Reason, Message: req.Message, Metadata: md,
		Idempotency: idempotencyRef(r),
	}))
}

// refundCreated is the answer of a new refund: also a retry's, after a
// crash, with the refund as it is now (effectAnswer).
func refundCreated(rf *payment.Refund, err error) (int, any, error) {
	return answer(http.StatusCreated, rf, err, univapay.RefundOf)
}

func (s *Server) getRefund(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	rf, err := s.svc.Refunds.Refund(r.Context(), c, ids.store, ids.charge, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, rf, err, univapay.RefundOf)
}

func (s *Server) listRefunds(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Refunds.Refunds(r.Context(), c, ids.store, ids.charge, p)
	return answer(http.StatusOK, page, err, listOf(univapay.RefundOf))
}

type wireRefundUpdate struct {
	Reason   *string         `json:"reason"`
	Message  *string         `json:"message"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *Server) updateRefund(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireRefundUpdate
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	md, err := payment.ParseMetadata(req.Metadata, "metadata")
	if err != nil {
		return 0, nil, err
	}
	rf, err := s.svc.Refunds.UpdateRefund(r.Context(), c, ids.store, ids.charge, ids.id, payment.RefundUpdate{Reason: req.Reason, Message: req.Message, Metadata: md})
	return answer(http.StatusOK, rf, err, univapay.RefundOf)
}

func (s *Server) createCancel(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	md, err := s.decodeMetadata(r)
	if err != nil {
		return 0, nil, err
	}
	return cancelCreated(s.svc.Refunds.CreateCancel(r.Context(), c, ids.store, ids.charge, payment.NewCancel{
		Metadata: md, Idempotency: idempotencyRef(r),
	}))
}

// cancelCreated is the answer of a new cancel: also a retry's, after a
// crash, with the cancel as it is now (effectAnswer).
func cancelCreated(cn *payment.Cancel, err error) (int, any, error) {
	return answer(http.StatusCreated, cn, err, univapay.CancelOf)
}

func (s *Server) getCancel(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	cn, err := s.svc.Refunds.Cancel(r.Context(), c, ids.store, ids.charge, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, cn, err, univapay.CancelOf)
}

func (s *Server) listCancels(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Refunds.Cancels(r.Context(), c, ids.store, ids.charge, p)
	return answer(http.StatusOK, page, err, listOf(univapay.CancelOf))
}

func (s *Server) updateCancel(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	md, err := s.decodeMetadata(r)
	if err != nil {
		return 0, nil, err
	}
	cn, err := s.svc.Refunds.UpdateCancel(r.Context(), c, ids.store, ids.charge, ids.id, md)
	return answer(http.StatusOK, cn, err, univapay.CancelOf)
}

func (s *Server) listTransactions(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	q := newQuery(r)
	f := payment.LedgerFilter{
		From: q.time("from"), To: q.time("to"), Status: q.str("status"),
		Type: q.oneOf("type", payment.LedgerCharge, payment.LedgerRefund), Mode: q.mode(), Search: q.str("search"),
	}
	f.MetadataKey, f.MetadataValue = q.metadata()
	if err := q.err(); err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Merchants.Transactions(r.Context(), c, ids.store, f, p)
	return answer(http.StatusOK, page, err, listOf(univapay.TransactionOf))
}
