package api

import (
	"encoding/json"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// webhookRoutes are the webhook routes (UnivaPay's): a store's webhooks
// under /stores/{storeId}, and without the store the merchant-level
// webhooks of a merchant token (a store token's own store's otherwise).
// Each webhook's delivery log and redelivery hang under it. Every one of
// them needs the token's secret (the service refuses a browser token). A
// store's webhooks themselves are also served under merchantPrefix, as
// UnivaPay's docs write them.
func (s *Server) webhookRoutes(r *mux.Router) {
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	const stores = "/stores/{storeId}"
	for _, prefix := range []string{"", stores, merchantPrefix + stores} {
		r.HandleFunc(prefix+"/webhooks", s.authed(s.listWebhooks)).Methods(get)
		r.HandleFunc(prefix+"/webhooks", s.authed(s.createWebhook)).Methods(post)
		r.HandleFunc(prefix+"/webhooks/{id}", s.authed(s.getWebhook)).Methods(get)
		r.HandleFunc(prefix+"/webhooks/{id}", s.authed(s.updateWebhook)).Methods(patch)
		r.HandleFunc(prefix+"/webhooks/{id}", s.authed(s.deleteWebhook)).Methods(del)
	}
	for _, prefix := range []string{"", stores} {
		r.HandleFunc(prefix+"/webhooks/{id}/events", s.authed(s.listWebhookEvents)).Methods(get)
		r.HandleFunc(prefix+"/webhooks/{id}/events/{eventId}/redeliver", s.authed(s.redeliverEvent)).Methods(post)
	}
	r.HandleFunc("/events/stream", s.eventStream).Methods(get)
}

// wireWebhook is a webhook (UnivaPay's wire format). Secret, the Standard
// Webhooks signing secret, is present only in the answer to its creation.
type wireWebhook struct {
	ID            uuid.UUID     `json:"id"`
	MerchantID    uuid.UUID     `json:"merchant_id"`
	StoreID       *uuid.UUID    `json:"store_id"`
	Triggers      []string      `json:"triggers"`
	URL           string        `json:"url"`
	AuthToken     *string       `json:"auth_token"`
	Active        bool          `json:"active"`
	IsIntegration bool          `json:"is_integration"`
	CreatedOn     univapay.Time `json:"created_on"`
	UpdatedOn     univapay.Time `json:"updated_on"`
	Secret        string        `json:"secret,omitempty"`
}

func toWireWebhook(w *payment.Webhook) wireWebhook {
	out := wireWebhook{
		ID: w.ID, MerchantID: w.MerchantID, StoreID: optionalID(w.StoreID), Triggers: w.Triggers, URL: w.URL,
		AuthToken: optionalString(w.AuthToken), Active: w.Active, CreatedOn: univapay.Time(w.CreatedOn), UpdatedOn: univapay.Time(w.UpdatedOn),
	}
	if out.Triggers == nil {
		out.Triggers = []string{}
	}
	return out
}

func optionalID(id uuid.UUID) *uuid.UUID {
	if id == uuid.Nil {
		return nil
	}
	return &id
}

// wireWebhookInput is the body of a webhook's creation or change: absent
// (or null) fields are left as they are on a change.
type wireWebhookInput struct {
	Triggers  []string `json:"triggers"`
	URL       *string  `json:"url"`
	AuthToken *string  `json:"auth_token"`
	Active    *bool    `json:"active"`
}

func (s *Server) decodeWebhookInput(r *http.Request) (payment.WebhookInput, error) {
	var req wireWebhookInput
	if err := s.decode(r, &req); err != nil {
		return payment.WebhookInput{}, err
	}
	return payment.WebhookInput{Triggers: req.Triggers, URL: req.URL, AuthToken: req.AuthToken, Active: req.Active}, nil
}

func (s *Server) createWebhook(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	in, err := s.decodeWebhookInput(r)
	if err != nil {
		return 0, nil, err
	}
	created, err := s.svc.Notify.CreateWebhook(r.Context(), c, ids.store, in)
	if err != nil {
		return 0, nil, err
	}
	out := toWireWebhook(created.Webhook)
	out.Secret = created.Secret
	return http.StatusCreated, out, nil
}

func (s *Server) getWebhook(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	w, err := s.svc.Notify.Webhook(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, w, err, toWireWebhook)
}

func (s *Server) listWebhooks(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Notify.Webhooks(r.Context(), c, ids.store, p)
	return answer(http.StatusOK, page, err, listOf(toWireWebhook))
}

func (s *Server) updateWebhook(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	in, err := s.decodeWebhookInput(r)
	if err != nil {
		return 0, nil, err
	}
	w, err := s.svc.Notify.UpdateWebhook(r.Context(), c, ids.store, ids.id, in)
	return answer(http.StatusOK, w, err, toWireWebhook)
}

func (s *Server) deleteWebhook(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	if err := s.svc.Notify.DeleteWebhook(r.Context(), c, ids.store, ids.id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// wireWebhookEvent is one line of a webhook's delivery log: the event (its
// id, name and data) and how its delivery went. fired_on is the last
// attempt's time, null before the first; status is pending, successful or
// failed (given up), attempts the sends of the current series.
type wireWebhookEvent struct {
	ID           uuid.UUID       `json:"id"`
	WebhookID    uuid.UUID       `json:"webhook_id"`
	Event        string          `json:"event"`
	Data         json.RawMessage `json:"data"`
	Successful   bool            `json:"successful"`
	FiredOn      *univapay.Time  `json:"fired_on"`
	ErrorMessage *string         `json:"error_message"`
	Attempts     int             `json:"attempts"`
	Status       string          `json:"status"`
	CreatedOn    univapay.Time   `json:"created_on"`
}

func toWireWebhookEvent(e payment.DeliveryLogEntry) wireWebhookEvent {
	d, ev := e.Delivery, e.Event
	out := wireWebhookEvent{
		ID: ev.ID, WebhookID: d.WebhookID, Event: ev.Name, Data: ev.Data, Successful: d.Status == payment.DeliverySuccessful,
		ErrorMessage: optionalString(d.LastError), Attempts: d.Attempts, Status: string(d.Status), CreatedOn: univapay.Time(ev.CreatedOn),
	}
	if d.Attempts > 0 {
		fired := univapay.Time(d.UpdatedOn)
		out.FiredOn = &fired
	}
	return out
}

func (s *Server) listWebhookEvents(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Notify.WebhookDeliveries(r.Context(), c, ids.store, ids.id, p)
	return answer(http.StatusOK, page, err, listOf(toWireWebhookEvent))
}

func (s *Server) redeliverEvent(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	e, err := s.svc.Notify.RedeliverEvent(r.Context(), c, ids.store, ids.id, ids.event)
	return answer(http.StatusOK, e, err, toWireWebhookEvent)
}
