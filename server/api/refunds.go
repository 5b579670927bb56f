package api

import (
	"encoding/json"
	"net/http"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// wireRefund is a refund (UnivaPay's wire format).
type wireRefund struct {
	ID              uuid.UUID         `json:"id"`
	StoreID         uuid.UUID         `json:"store_id"`
	ChargeID        uuid.UUID         `json:"charge_id"`
	LedgerID        *string           `json:"ledger_id"`
	Status          string            `json:"status"`
	Amount          int64             `json:"amount"`
	Currency        string            `json:"currency"`
	AmountFormatted json.Number       `json:"amount_formatted"`
	Reason          *string           `json:"reason"`
	Message         *string           `json:"message"`
	Error           *wirePaymentError `json:"error"`
	Metadata        payment.Metadata  `json:"metadata"`
	Mode            payment.Mode      `json:"mode"`
	CreatedOn       wireTime          `json:"created_on"`
	UpdatedOn       wireTime          `json:"updated_on"`
}

func toWireRefund(rf *payment.Refund) wireRefund {
	return wireRefund{
		ID: rf.ID, StoreID: rf.StoreID, ChargeID: rf.ChargeID, Status: string(rf.Status), Amount: rf.Amount,
		Currency: rf.Currency, AmountFormatted: formatted(rf.Amount, rf.Currency), Reason: optionalString(rf.Reason),
		Message: optionalString(rf.Message), Error: toWirePaymentError(rf.Error), Metadata: wireMetadata(rf.Metadata),
		Mode: rf.Mode, CreatedOn: wireTime(rf.CreatedOn), UpdatedOn: wireTime(rf.UpdatedOn),
	}
}

// wireCancel is a cancel (UnivaPay's wire format).
type wireCancel struct {
	ID        uuid.UUID         `json:"id"`
	ChargeID  uuid.UUID         `json:"charge_id"`
	StoreID   uuid.UUID         `json:"store_id"`
	Status    string            `json:"status"`
	Error     *wirePaymentError `json:"error"`
	Metadata  payment.Metadata  `json:"metadata"`
	Mode      payment.Mode      `json:"mode"`
	CreatedOn wireTime          `json:"created_on"`
	UpdatedOn wireTime          `json:"updated_on"`
}

func toWireCancel(cn *payment.Cancel) wireCancel {
	return wireCancel{
		ID: cn.ID, ChargeID: cn.ChargeID, StoreID: cn.StoreID, Status: string(cn.Status),
		Error: toWirePaymentError(cn.Error), Metadata: wireMetadata(cn.Metadata), Mode: cn.Mode,
		CreatedOn: wireTime(cn.CreatedOn), UpdatedOn: wireTime(cn.UpdatedOn),
	}
}

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
	return refundCreated(s.svc.CreateRefund(r.Context(), c, ids.store, ids.charge, payment.NewRefund{
		Amount: req.Amount.Value, Currency: req.Currency, Reason: req.Reason, Message: req.Message, Metadata: md,
		Idempotency: idempotencyRef(r),
	}))
}

// refundCreated is the answer of a new refund: also a retry's, after a
// crash, with the refund as it is now (effectAnswer).
func refundCreated(rf *payment.Refund, err error) (int, any, error) {
	return answer(http.StatusCreated, rf, err, toWireRefund)
}

func (s *Server) getRefund(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	rf, err := s.svc.Refund(r.Context(), c, ids.store, ids.charge, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, rf, err, toWireRefund)
}

func (s *Server) listRefunds(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Refunds(r.Context(), c, ids.store, ids.charge, p)
	return answer(http.StatusOK, page, err, listOf(toWireRefund))
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
	rf, err := s.svc.UpdateRefund(r.Context(), c, ids.store, ids.charge, ids.id, payment.RefundUpdate{Reason: req.Reason, Message: req.Message, Metadata: md})
	return answer(http.StatusOK, rf, err, toWireRefund)
}

func (s *Server) createCancel(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	md, err := s.decodeMetadata(r)
	if err != nil {
		return 0, nil, err
	}
	return cancelCreated(s.svc.CreateCancel(r.Context(), c, ids.store, ids.charge, payment.NewCancel{
		Metadata: md, Idempotency: idempotencyRef(r),
	}))
}

// cancelCreated is the answer of a new cancel: also a retry's, after a
// crash, with the cancel as it is now (effectAnswer).
func cancelCreated(cn *payment.Cancel, err error) (int, any, error) {
	return answer(http.StatusCreated, cn, err, toWireCancel)
}

func (s *Server) getCancel(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	cn, err := s.svc.Cancel(r.Context(), c, ids.store, ids.charge, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, cn, err, toWireCancel)
}

func (s *Server) listCancels(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Cancels(r.Context(), c, ids.store, ids.charge, p)
	return answer(http.StatusOK, page, err, listOf(toWireCancel))
}

func (s *Server) updateCancel(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	md, err := s.decodeMetadata(r)
	if err != nil {
		return 0, nil, err
	}
	cn, err := s.svc.UpdateCancel(r.Context(), c, ids.store, ids.charge, ids.id, md)
	return answer(http.StatusOK, cn, err, toWireCancel)
}

// wireTransaction is one line of the transaction history.
type wireTransaction struct {
	ID              uuid.UUID        `json:"id"`
	StoreID         uuid.UUID        `json:"store_id"`
	ResourceID      uuid.UUID        `json:"resource_id"`
	ChargeID        uuid.UUID        `json:"charge_id"`
	Type            string           `json:"type"`
	Status          string           `json:"status"`
	Amount          int64            `json:"amount"`
	Currency        string           `json:"currency"`
	AmountFormatted json.Number      `json:"amount_formatted"`
	PaymentType     string           `json:"payment_type"`
	Metadata        payment.Metadata `json:"metadata"`
	Mode            payment.Mode     `json:"mode"`
	CreatedOn       wireTime         `json:"created_on"`
	UpdatedOn       wireTime         `json:"updated_on"`
}

func toWireTransaction(e *payment.LedgerEntry) wireTransaction {
	return wireTransaction{
		ID: e.ResourceID, StoreID: e.StoreID, ResourceID: e.ResourceID, ChargeID: e.ChargeID, Type: e.Type,
		Status: e.Status, Amount: e.Amount, Currency: e.Currency, AmountFormatted: formatted(e.Amount, e.Currency),
		PaymentType: payment.PaymentTypeCard, Metadata: wireMetadata(e.Metadata), Mode: e.Mode,
		CreatedOn: wireTime(e.CreatedOn), UpdatedOn: wireTime(e.UpdatedOn),
	}
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
	page, err := s.svc.Transactions(r.Context(), c, ids.store, f, p)
	return answer(http.StatusOK, page, err, listOf(toWireTransaction))
}
