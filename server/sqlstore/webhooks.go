package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// ---- webhooks

const webhookColumns = `id, merchant_id, store_id, mode, triggers, url, auth_token, active, secret_key_id, secret_sealed,
	created_on, updated_on`

func webhookArgs(d Dialect, w *payment.Webhook) ([]any, error) {
	triggers := w.Triggers
	if triggers == nil {
		triggers = []string{}
	}
	tj, err := marshal(triggers)
	if err != nil {
		return nil, err
	}
	sealed := w.SigningSecret.Data
	if sealed == nil {
		sealed = []byte{}
	}
	return []any{
		d.ID(w.ID), d.ID(w.MerchantID), d.OptionalID(w.StoreID), string(w.Mode), tj, w.URL, w.AuthToken, w.Active,
		w.SigningSecret.KeyID, sealed, d.Time(w.CreatedOn), d.Time(w.UpdatedOn),
	}, nil
}

func scanWebhook(d Dialect, row Row) (*payment.Webhook, error) {
	var w payment.Webhook
	var id, mid, sid, mode, triggers string
	var created, updated instant
	err := row.Scan(&id, &mid, &sid, &mode, &triggers, &w.URL, &w.AuthToken, &w.Active, &w.SigningSecret.KeyID,
		&w.SigningSecret.Data, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(triggers), &w.Triggers); err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "webhooks"}
	w.ID, w.MerchantID, w.StoreID = ids.parse("id", id), ids.parse("merchant_id", mid), ids.parse("store_id", sid)
	if ids.err != nil {
		return nil, ids.err
	}
	w.Mode, w.CreatedOn, w.UpdatedOn = payment.Mode(mode), created.t, updated.t
	return &w, nil
}

func (t *Tx) CreateWebhook(ctx context.Context, w *payment.Webhook) error {
	args, err := webhookArgs(t.d, w)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var webhookByID = newPointRead("updated_on", webhookColumns, "webhooks", "id = ?")

func (t *Tx) Webhook(ctx context.Context, id uuid.UUID) (*payment.Webhook, error) {
	w, err := scanWebhook(t.d, t.readOne(ctx, webhookByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "webhook")
	}
	return w, nil
}

func (t *Tx) UpdateWebhook(ctx context.Context, w *payment.Webhook) error {
	args, err := webhookArgs(t.d, w)
	if err != nil {
		return err
	}
	_, err = t.q.ExecContext(ctx, `UPDATE webhooks SET (`+webhookColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(w.ID))...)
	return err
}

// DeleteWebhook deletes the webhook's log with it; the events stay.
func (t *Tx) DeleteWebhook(ctx context.Context, id uuid.UUID) error {
	if _, err := t.q.ExecContext(ctx, `DELETE FROM deliveries WHERE webhook_id = ?`, t.d.ID(id)); err != nil {
		return err
	}
	_, err := t.q.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, t.d.ID(id))
	return err
}

func (t *Tx) ListWebhooks(ctx context.Context, f payment.WebhookFilter, p payment.ListParams) (payment.Page[*payment.Webhook], error) {
	c := conditions{d: t.d}
	c.add("merchant_id = ?", t.d.ID(f.MerchantID))
	if f.OwnerOnly {
		c.add("store_id = ?", t.d.OptionalID(f.StoreID))
	}
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	return listPage(ctx, t, webhookColumns, "webhooks", c.where(), c.args, p, scanWebhook)
}

// WebhookURLTaken compares URLs folding ASCII letters only. Inside an
// Update that marks its reads it first marks the merchant's row
// (lockRow), so that two transactions giving a webhook of the merchant the
// same URL take turns, and the second finds the first one's.
func (t *Tx) WebhookURLTaken(ctx context.Context, w *payment.Webhook) (bool, error) {
	if err := t.lockRow(ctx, "merchants", "verified", w.MerchantID); err != nil {
		return false, err
	}
	var taken bool
	err := t.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks
		WHERE merchant_id = ? AND store_id = ? AND mode = ? AND `+t.d.EqualFold("url")+` AND id != ?)`,
		t.d.ID(w.MerchantID), t.d.OptionalID(w.StoreID), string(w.Mode), w.URL, t.d.ID(w.ID)).Scan(&taken)
	return taken, err
}

// ActiveWebhooks returns them in the order they were created.
func (t *Tx) ActiveWebhooks(ctx context.Context, merchantID, storeID uuid.UUID, mode payment.Mode) ([]*payment.Webhook, error) {
	return queryAll(ctx, t, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks
		WHERE merchant_id = ? AND mode = ? AND active = TRUE AND store_id IN (?, ?) ORDER BY id`,
		t.d.ID(merchantID), string(mode), t.d.OptionalID(storeID), t.d.OptionalID(uuid.Nil))
}

// ---- events

const eventColumns = `id, merchant_id, store_id, mode, name, resource_id, data, created_on`

func scanEvent(d Dialect, row Row) (*payment.Event, error) {
	var e payment.Event
	var id, mid, sid, mode, rid, data string
	var created instant
	if err := row.Scan(&id, &mid, &sid, &mode, &e.Name, &rid, &data, &created); err != nil {
		return nil, err
	}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	ids := idColumns{d: d, table: "events"}
	e.ID, e.MerchantID, e.StoreID = ids.parse("id", id), ids.parse("merchant_id", mid), ids.parse("store_id", sid)
	e.ResourceID = ids.parse("resource_id", rid)
	if ids.err != nil {
		return nil, ids.err
	}
	e.Mode, e.CreatedOn = payment.Mode(mode), created.t
	return &e, nil
}

func (t *Tx) CreateEvent(ctx context.Context, e *payment.Event) error {
	_, err := t.q.ExecContext(ctx, `INSERT INTO events (`+eventColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.d.ID(e.ID), t.d.ID(e.MerchantID), t.d.OptionalID(e.StoreID), string(e.Mode), e.Name, t.d.OptionalID(e.ResourceID),
		string(e.Data), t.d.Time(e.CreatedOn))
	return err
}

func (t *Tx) Event(ctx context.Context, id uuid.UUID) (*payment.Event, error) {
	e, err := scanEvent(t.d, t.q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "event")
	}
	return e, nil
}

func (t *Tx) ListEvents(ctx context.Context, f payment.EventFilter, limit int) ([]*payment.Event, error) {
	if limit <= 0 {
		return []*payment.Event{}, nil
	}
	c := conditions{d: t.d}
	c.scope(f.MerchantID, f.StoreID)
	c.add("mode = ?", string(f.Mode))
	if f.After != uuid.Nil {
		c.add("id > ?", t.d.ID(f.After))
	}
	if f.ResourceID != uuid.Nil {
		c.add("resource_id = ?", t.d.ID(f.ResourceID))
	}
	return queryAll(ctx, t, scanEvent, `SELECT `+eventColumns+` FROM events WHERE `+c.where()+` ORDER BY id LIMIT ?`,
		append(c.args, limit)...)
}

// ---- deliveries

const deliveryColumns = `id, event_id, webhook_id, merchant_id, store_id, status, attempts, last_error, last_status,
	created_on, updated_on, delivered_on`

func deliveryArgs(d Dialect, dl *payment.Delivery) []any {
	return []any{
		d.ID(dl.ID), d.ID(dl.EventID), d.ID(dl.WebhookID), d.ID(dl.MerchantID), d.OptionalID(dl.StoreID),
		string(dl.Status), dl.Attempts, dl.LastError, dl.LastStatus, d.Time(dl.CreatedOn), d.Time(dl.UpdatedOn),
		nullTime(d, dl.DeliveredOn),
	}
}

func scanDelivery(d Dialect, row Row) (*payment.Delivery, error) {
	var dl payment.Delivery
	var id, eid, wid, mid, sid, status string
	var created, updated, delivered instant
	err := row.Scan(&id, &eid, &wid, &mid, &sid, &status, &dl.Attempts, &dl.LastError, &dl.LastStatus, &created, &updated,
		&delivered)
	if err != nil {
		return nil, err
	}
	ids := idColumns{d: d, table: "deliveries"}
	dl.ID, dl.EventID, dl.WebhookID = ids.parse("id", id), ids.parse("event_id", eid), ids.parse("webhook_id", wid)
	dl.MerchantID, dl.StoreID = ids.parse("merchant_id", mid), ids.parse("store_id", sid)
	if ids.err != nil {
		return nil, ids.err
	}
	dl.Status = payment.DeliveryStatus(status)
	dl.CreatedOn, dl.UpdatedOn, dl.DeliveredOn = created.t, updated.t, delivered.ptr()
	return &dl, nil
}

func (t *Tx) CreateDelivery(ctx context.Context, dl *payment.Delivery) error {
	args := deliveryArgs(t.d, dl)
	_, err := t.q.ExecContext(ctx, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

var (
	deliveryByID = newPointRead("updated_on", deliveryColumns, "deliveries", "id = ?")
	deliveryOf   = newPointRead("updated_on", deliveryColumns, "deliveries", "webhook_id = ? AND event_id = ?")
)

func (t *Tx) Delivery(ctx context.Context, id uuid.UUID) (*payment.Delivery, error) {
	dl, err := scanDelivery(t.d, t.readOne(ctx, deliveryByID, t.d.ID(id)))
	if err != nil {
		return nil, notFound(err, "delivery")
	}
	return dl, nil
}

func (t *Tx) DeliveryFor(ctx context.Context, webhookID, eventID uuid.UUID) (*payment.Delivery, error) {
	dl, err := scanDelivery(t.d, t.readOne(ctx, deliveryOf, t.d.ID(webhookID), t.d.ID(eventID)))
	if err != nil {
		return nil, notFound(err, "delivery")
	}
	return dl, nil
}

func (t *Tx) UpdateDelivery(ctx context.Context, dl *payment.Delivery) error {
	args := deliveryArgs(t.d, dl)
	_, err := t.q.ExecContext(ctx, `UPDATE deliveries SET (`+deliveryColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, t.d.ID(dl.ID))...)
	return err
}

func (t *Tx) ListDeliveries(ctx context.Context, webhookID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Delivery], error) {
	return listPage(ctx, t, deliveryColumns, "deliveries", "webhook_id = ?", []any{t.d.ID(webhookID)}, p, scanDelivery)
}
