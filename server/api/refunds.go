package api

import (
	"encoding/json"
	"net/http"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// wireRefund is a refund (reference §3.5).
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

// wireCancel is a cancel (reference §3.6).
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

// chargePath reads {storeId} and {chargeId}.
func chargePath(r *http.Request) (uuid.UUID, uuid.UUID, error) {
	return storeAndID(r, "chargeId")
}

type wireNewRefund struct {
	Amount   int64           `json:"amount"`
	Currency string          `json:"currency"`
	Reason   string          `json:"reason"`
	Message  string          `json:"message"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *Server) createRefund(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req wireNewRefund
	if err := s.decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	md, err := payment.ParseMetadata(req.Metadata, "metadata")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rf, err := s.svc.CreateRefund(r.Context(), c, storeID, chargeID, payment.NewRefund{
		Amount: req.Amount, Currency: req.Currency, Reason: req.Reason, Message: req.Message, Metadata: md,
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, toWireRefund(rf))
}

func (s *Server) getRefund(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := pathID(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rf, err := s.svc.Refund(r.Context(), c, storeID, chargeID, id, s.pollWaitOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireRefund(rf))
}

func (s *Server) listRefunds(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := listParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.svc.Refunds(r.Context(), c, storeID, chargeID, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireList(page, toWireRefund))
}

type wireRefundUpdate struct {
	Reason   *string         `json:"reason"`
	Message  *string         `json:"message"`
	Metadata json.RawMessage `json:"metadata"`
}

func (s *Server) updateRefund(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := pathID(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req wireRefundUpdate
	if err := s.decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	md, err := payment.ParseMetadata(req.Metadata, "metadata")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rf, err := s.svc.UpdateRefund(r.Context(), c, storeID, chargeID, id, payment.RefundUpdate{Reason: req.Reason, Message: req.Message, Metadata: md})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireRefund(rf))
}

func (s *Server) createCancel(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req wireMetadataUpdate
	if err := s.decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	md, err := payment.ParseMetadata(req.Metadata, "metadata")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cn, err := s.svc.CreateCancel(r.Context(), c, storeID, chargeID, md)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, toWireCancel(cn))
}

func (s *Server) getCancel(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := pathID(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cn, err := s.svc.Cancel(r.Context(), c, storeID, chargeID, id, s.pollWaitOf(r))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireCancel(cn))
}

func (s *Server) listCancels(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := listParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.svc.Cancels(r.Context(), c, storeID, chargeID, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireList(page, toWireCancel))
}

func (s *Server) updateCancel(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, chargeID, err := chargePath(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := pathID(r, "id")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req wireMetadataUpdate
	if err := s.decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	md, err := payment.ParseMetadata(req.Metadata, "metadata")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	cn, err := s.svc.UpdateCancel(r.Context(), c, storeID, chargeID, id, md)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireCancel(cn))
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

func (s *Server) listTransactions(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, err := optionalStoreID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	p, err := listParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	q := newQuery(r)
	f := payment.LedgerFilter{
		From: q.time("from"), To: q.time("to"), Status: q.str("status"),
		Type: q.oneOf("type", payment.LedgerCharge, payment.LedgerRefund), Mode: q.mode(),
	}
	if err := q.err(); err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.svc.Transactions(r.Context(), c, storeID, f, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireList(page, toWireTransaction))
}
