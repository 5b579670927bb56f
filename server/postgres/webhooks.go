package postgres

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// queryAll reads every row a query returns.
func queryAll[T any](ctx context.Context, q querier, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		item, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, rows.Err()
}

// ---- webhooks

const webhookColumns = `id, merchant_id, store_id, mode, triggers, url, auth_token, active, secret_key_id, secret_sealed,
	created_on, updated_on`

func webhookArgs(w *payment.Webhook) ([]any, error) {
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
		w.ID, w.MerchantID, w.StoreID, string(w.Mode), tj, w.URL, w.AuthToken, w.Active,
		w.SigningSecret.KeyID, sealed, w.CreatedOn, w.UpdatedOn,
	}, nil
}

func scanWebhook(row scanner) (*payment.Webhook, error) {
	var w payment.Webhook
	var mode, triggers string
	err := row.Scan(&w.ID, &w.MerchantID, &w.StoreID, &mode, &triggers, &w.URL, &w.AuthToken, &w.Active,
		&w.SigningSecret.KeyID, &w.SigningSecret.Data, &w.CreatedOn, &w.UpdatedOn)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(triggers), &w.Triggers); err != nil {
		return nil, err
	}
	w.Mode = payment.Mode(mode)
	return &w, nil
}

func (t *tx) CreateWebhook(ctx context.Context, w *payment.Webhook) error {
	args, err := webhookArgs(w)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `INSERT INTO webhooks (`+webhookColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Webhook(ctx context.Context, id uuid.UUID) (*payment.Webhook, error) {
	w, err := scanWebhook(t.readOne(ctx, webhookColumns, "webhooks", "id = ?", id))
	if err != nil {
		return nil, notFound(err, "webhook")
	}
	return w, nil
}

func (t *tx) UpdateWebhook(ctx context.Context, w *payment.Webhook) error {
	args, err := webhookArgs(w)
	if err != nil {
		return err
	}
	_, err = t.tx.ExecContext(ctx, `UPDATE webhooks SET (`+webhookColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, w.ID)...)
	return err
}

// DeleteWebhook deletes the webhook's log with it; the events stay.
func (t *tx) DeleteWebhook(ctx context.Context, id uuid.UUID) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM deliveries WHERE webhook_id = ?`, id); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, id)
	return err
}

func (t *tx) ListWebhooks(ctx context.Context, f payment.WebhookFilter, p payment.ListParams) (payment.Page[*payment.Webhook], error) {
	var c conditions
	c.add("merchant_id = ?", f.MerchantID)
	if f.OwnerOnly {
		c.add("store_id = ?", f.StoreID)
	}
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	return listPage(ctx, t.tx, webhookColumns, "webhooks", c.where(), c.args, p, scanWebhook)
}

// WebhookURLTaken compares URLs folding ASCII letters only, as SQLite's
// NOCASE does. Inside an Update it first marks the merchant's row
// (lockRow), so that two transactions giving a webhook of the merchant the
// same URL take turns, and the second finds the first one's.
func (t *tx) WebhookURLTaken(ctx context.Context, w *payment.Webhook) (bool, error) {
	if t.write {
		if err := t.lockRow(ctx, "merchants", "verified", w.MerchantID); err != nil {
			return false, err
		}
	}
	var taken bool
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks
		WHERE merchant_id = ? AND store_id = ? AND mode = ? AND `+equalFold("url")+` AND id != ?)`,
		w.MerchantID, w.StoreID, string(w.Mode), w.URL, w.ID).Scan(&taken)
	return taken, err
}

// ActiveWebhooks returns them in the order they were created.
func (t *tx) ActiveWebhooks(ctx context.Context, merchantID, storeID uuid.UUID, mode payment.Mode) ([]*payment.Webhook, error) {
	return queryAll(ctx, t.tx, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks
		WHERE merchant_id = ? AND mode = ? AND active AND store_id IN (?, ?) ORDER BY id`,
		merchantID, string(mode), storeID, uuid.Nil)
}

// ---- events

const eventColumns = `id, merchant_id, store_id, mode, name, resource_id, data, created_on`

func scanEvent(row scanner) (*payment.Event, error) {
	var e payment.Event
	var mode, data string
	if err := row.Scan(&e.ID, &e.MerchantID, &e.StoreID, &mode, &e.Name, &e.ResourceID, &data, &e.CreatedOn); err != nil {
		return nil, err
	}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	e.Mode = payment.Mode(mode)
	return &e, nil
}

func (t *tx) CreateEvent(ctx context.Context, e *payment.Event) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO events (`+eventColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID, e.MerchantID, e.StoreID, string(e.Mode), e.Name, e.ResourceID, string(e.Data), e.CreatedOn)
	return err
}

func (t *tx) Event(ctx context.Context, id uuid.UUID) (*payment.Event, error) {
	e, err := scanEvent(t.tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, id))
	if err != nil {
		return nil, notFound(err, "event")
	}
	return e, nil
}

func (t *tx) ListEvents(ctx context.Context, f payment.EventFilter, limit int) ([]*payment.Event, error) {
	if limit <= 0 {
		return []*payment.Event{}, nil
	}
	var c conditions
	c.scope(f.MerchantID, f.StoreID)
	c.add("mode = ?", string(f.Mode))
	if f.After != uuid.Nil {
		c.add("id > ?", f.After)
	}
	if f.ResourceID != uuid.Nil {
		c.add("resource_id = ?", f.ResourceID)
	}
	return queryAll(ctx, t.tx, scanEvent, `SELECT `+eventColumns+` FROM events WHERE `+c.where()+` ORDER BY id LIMIT ?`,
		append(c.args, limit)...)
}

// ---- deliveries

const deliveryColumns = `id, event_id, webhook_id, merchant_id, store_id, status, attempts, last_error, last_status,
	created_on, updated_on, delivered_on`

func deliveryArgs(d *payment.Delivery) []any {
	return []any{
		d.ID, d.EventID, d.WebhookID, d.MerchantID, d.StoreID,
		string(d.Status), d.Attempts, d.LastError, d.LastStatus, d.CreatedOn, d.UpdatedOn,
		d.DeliveredOn,
	}
}

func scanDelivery(row scanner) (*payment.Delivery, error) {
	var d payment.Delivery
	var status string
	err := row.Scan(&d.ID, &d.EventID, &d.WebhookID, &d.MerchantID, &d.StoreID, &status, &d.Attempts, &d.LastError,
		&d.LastStatus, &d.CreatedOn, &d.UpdatedOn, &d.DeliveredOn)
	if err != nil {
		return nil, err
	}
	d.Status = payment.DeliveryStatus(status)
	d.DeliveredOn = utc(d.DeliveredOn)
	return &d, nil
}

func (t *tx) CreateDelivery(ctx context.Context, d *payment.Delivery) error {
	args := deliveryArgs(d)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Delivery(ctx context.Context, id uuid.UUID) (*payment.Delivery, error) {
	d, err := scanDelivery(t.readOne(ctx, deliveryColumns, "deliveries", "id = ?", id))
	if err != nil {
		return nil, notFound(err, "delivery")
	}
	return d, nil
}

func (t *tx) DeliveryFor(ctx context.Context, webhookID, eventID uuid.UUID) (*payment.Delivery, error) {
	d, err := scanDelivery(t.readOne(ctx, deliveryColumns, "deliveries", "webhook_id = ? AND event_id = ?", webhookID, eventID))
	if err != nil {
		return nil, notFound(err, "delivery")
	}
	return d, nil
}

func (t *tx) UpdateDelivery(ctx context.Context, d *payment.Delivery) error {
	args := deliveryArgs(d)
	_, err := t.tx.ExecContext(ctx, `UPDATE deliveries SET (`+deliveryColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, d.ID)...)
	return err
}

func (t *tx) ListDeliveries(ctx context.Context, webhookID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Delivery], error) {
	return listPage(ctx, t.tx, deliveryColumns, "deliveries", "webhook_id = ?", []any{webhookID}, p, scanDelivery)
}
