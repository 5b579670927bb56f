package sqlite

import (
	"context"
	"database/sql"
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
		w.ID.String(), w.MerchantID.String(), idString(w.StoreID), string(w.Mode), tj, w.URL, w.AuthToken, w.Active,
		w.SigningSecret.KeyID, sealed, micros(w.CreatedOn), micros(w.UpdatedOn),
	}, nil
}

func scanWebhook(row scanner) (*payment.Webhook, error) {
	var w payment.Webhook
	var id, mid, sid, mode, triggers string
	var created, updated int64
	err := row.Scan(&id, &mid, &sid, &mode, &triggers, &w.URL, &w.AuthToken, &w.Active, &w.SigningSecret.KeyID,
		&w.SigningSecret.Data, &created, &updated)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(triggers), &w.Triggers); err != nil {
		return nil, err
	}
	ids := idColumns{table: "webhooks"}
	w.ID, w.MerchantID, w.StoreID = ids.parse("id", id), ids.parse("merchant_id", mid), ids.parse("store_id", sid)
	if ids.err != nil {
		return nil, ids.err
	}
	w.Mode, w.CreatedOn, w.UpdatedOn = payment.Mode(mode), fromMicros(created), fromMicros(updated)
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
	w, err := scanWebhook(t.tx.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = ?`, id.String()))
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
		append(args, w.ID.String())...)
	return err
}

// DeleteWebhook deletes the webhook's log with it; the events stay.
func (t *tx) DeleteWebhook(ctx context.Context, id uuid.UUID) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM deliveries WHERE webhook_id = ?`, id.String()); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, id.String())
	return err
}

func (t *tx) ListWebhooks(ctx context.Context, f payment.WebhookFilter, p payment.ListParams) (payment.Page[*payment.Webhook], error) {
	var c conditions
	c.add("merchant_id = ?", f.MerchantID.String())
	if f.OwnerOnly {
		c.add("store_id = ?", idString(f.StoreID))
	}
	if f.Mode != "" {
		c.add("mode = ?", string(f.Mode))
	}
	return listPage(ctx, t.tx, webhookColumns, "webhooks", c.where(), c.args, p, scanWebhook)
}

// WebhookURLTaken compares URLs with NOCASE, which folds ASCII letters
// only.
func (t *tx) WebhookURLTaken(ctx context.Context, w *payment.Webhook) (bool, error) {
	var taken bool
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM webhooks
		WHERE merchant_id = ? AND store_id = ? AND mode = ? AND url = ? COLLATE NOCASE AND id != ?)`,
		w.MerchantID.String(), idString(w.StoreID), string(w.Mode), w.URL, w.ID.String()).Scan(&taken)
	return taken, err
}

// ActiveWebhooks returns them in the order they were created.
func (t *tx) ActiveWebhooks(ctx context.Context, merchantID, storeID uuid.UUID, mode payment.Mode) ([]*payment.Webhook, error) {
	return queryAll(ctx, t.tx, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks
		WHERE merchant_id = ? AND mode = ? AND active = 1 AND store_id IN (?, '') ORDER BY id`,
		merchantID.String(), string(mode), idString(storeID))
}

// ---- events

const eventColumns = `id, merchant_id, store_id, mode, name, resource_id, data, created_on`

func scanEvent(row scanner) (*payment.Event, error) {
	var e payment.Event
	var id, mid, sid, mode, rid, data string
	var created int64
	if err := row.Scan(&id, &mid, &sid, &mode, &e.Name, &rid, &data, &created); err != nil {
		return nil, err
	}
	if data != "" {
		e.Data = json.RawMessage(data)
	}
	ids := idColumns{table: "events"}
	e.ID, e.MerchantID, e.StoreID = ids.parse("id", id), ids.parse("merchant_id", mid), ids.parse("store_id", sid)
	e.ResourceID = ids.parse("resource_id", rid)
	if ids.err != nil {
		return nil, ids.err
	}
	e.Mode, e.CreatedOn = payment.Mode(mode), fromMicros(created)
	return &e, nil
}

func (t *tx) CreateEvent(ctx context.Context, e *payment.Event) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO events (`+eventColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		e.ID.String(), e.MerchantID.String(), idString(e.StoreID), string(e.Mode), e.Name, idString(e.ResourceID),
		string(e.Data), micros(e.CreatedOn))
	return err
}

func (t *tx) Event(ctx context.Context, id uuid.UUID) (*payment.Event, error) {
	e, err := scanEvent(t.tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events WHERE id = ?`, id.String()))
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
		c.add("id > ?", f.After.String())
	}
	if f.ResourceID != uuid.Nil {
		c.add("resource_id = ?", f.ResourceID.String())
	}
	return queryAll(ctx, t.tx, scanEvent, `SELECT `+eventColumns+` FROM events WHERE `+c.where()+` ORDER BY id LIMIT ?`,
		append(c.args, limit)...)
}

// ---- deliveries

const deliveryColumns = `id, event_id, webhook_id, merchant_id, store_id, status, attempts, last_error, last_status,
	created_on, updated_on, delivered_on`

func deliveryArgs(d *payment.Delivery) []any {
	return []any{
		d.ID.String(), d.EventID.String(), d.WebhookID.String(), d.MerchantID.String(), idString(d.StoreID),
		string(d.Status), d.Attempts, d.LastError, d.LastStatus, micros(d.CreatedOn), micros(d.UpdatedOn),
		nullMicros(d.DeliveredOn),
	}
}

func scanDelivery(row scanner) (*payment.Delivery, error) {
	var d payment.Delivery
	var id, eid, wid, mid, sid, status string
	var created, updated int64
	var delivered sql.NullInt64
	err := row.Scan(&id, &eid, &wid, &mid, &sid, &status, &d.Attempts, &d.LastError, &d.LastStatus, &created, &updated,
		&delivered)
	if err != nil {
		return nil, err
	}
	ids := idColumns{table: "deliveries"}
	d.ID, d.EventID, d.WebhookID = ids.parse("id", id), ids.parse("event_id", eid), ids.parse("webhook_id", wid)
	d.MerchantID, d.StoreID = ids.parse("merchant_id", mid), ids.parse("store_id", sid)
	if ids.err != nil {
		return nil, ids.err
	}
	d.Status = payment.DeliveryStatus(status)
	d.CreatedOn, d.UpdatedOn, d.DeliveredOn = fromMicros(created), fromMicros(updated), timePtr(delivered)
	return &d, nil
}

func (t *tx) CreateDelivery(ctx context.Context, d *payment.Delivery) error {
	args := deliveryArgs(d)
	_, err := t.tx.ExecContext(ctx, `INSERT INTO deliveries (`+deliveryColumns+`) VALUES (`+placeholders(len(args))+`)`, args...)
	return err
}

func (t *tx) Delivery(ctx context.Context, id uuid.UUID) (*payment.Delivery, error) {
	d, err := scanDelivery(t.tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries WHERE id = ?`, id.String()))
	if err != nil {
		return nil, notFound(err, "delivery")
	}
	return d, nil
}

func (t *tx) DeliveryFor(ctx context.Context, webhookID, eventID uuid.UUID) (*payment.Delivery, error) {
	d, err := scanDelivery(t.tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM deliveries
		WHERE webhook_id = ? AND event_id = ?`, webhookID.String(), eventID.String()))
	if err != nil {
		return nil, notFound(err, "delivery")
	}
	return d, nil
}

func (t *tx) UpdateDelivery(ctx context.Context, d *payment.Delivery) error {
	args := deliveryArgs(d)
	_, err := t.tx.ExecContext(ctx, `UPDATE deliveries SET (`+deliveryColumns+`) = (`+placeholders(len(args))+`) WHERE id = ?`,
		append(args, d.ID.String())...)
	return err
}

func (t *tx) ListDeliveries(ctx context.Context, webhookID uuid.UUID, p payment.ListParams) (payment.Page[*payment.Delivery], error) {
	return listPage(ctx, t.tx, deliveryColumns, "deliveries", "webhook_id = ?", []any{webhookID.String()}, p, scanDelivery)
}
