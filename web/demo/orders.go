package demo

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/web/message"
)

// placeOrder is POST /orders: the browser reports a charge id (from the
// widget's callback or the HTML mode's hidden input), or for the
// subscription a subscription id; the server checks it with the gateway
// before the order counts as paid.
func (d *shop) placeOrder(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	s := d.session(r)
	if r.ParseForm() != nil || !d.checkCSRF(r, s) {
		d.problem(w, r, http.StatusForbidden, "csrf", "")
		return
	}
	chargeID := r.PostForm.Get("chargeId")
	if chargeID == "" {
		chargeID = r.PostForm.Get("univapayChargeId")
	}
	method := r.PostForm.Get("method")
	if !slices.Contains([]string{"modal", "inline", "html"}, method) {
		method = "widget"
	}
	subID := r.PostForm.Get("subscriptionId")
	if subID == "" {
		subID = r.PostForm.Get("univapaySubscriptionId")
	}
	if subID != "" {
		d.settleSubscription(w, r, s, r.PostForm.Get("order"), subID, method)
		return
	}
	d.settle(w, r, s, r.PostForm.Get("order"), chargeID, method)
}

// linkReturn is where the hosted link form sends the shopper back:
// GET /orders/return?order=…&univapayChargeId=….
func (d *shop) linkReturn(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	q := r.URL.Query()
	d.settle(w, r, s, q.Get("order"), q.Get("univapayChargeId"), "hosted")
}

// settle verifies a charge for the session's order and records the order.
func (d *shop) settle(w http.ResponseWriter, r *http.Request, s *shopperSession, ref, chargeID, method string) {
	id, err := uuid.Parse(chargeID)
	if err != nil {
		d.problem(w, r, http.StatusBadRequest, "unverified", "missing or malformed charge id")
		return
	}
	// A charge already recorded shows its order again (a reload, a double
	// submit) and is never used for a second order.
	if o, ok := d.orders.byCharge(id.String()); ok {
		if o.Ref != ref {
			d.problem(w, r, http.StatusConflict, "unverified", "this charge already paid another order")
			return
		}
		// The session's own order, paid by the gateway's notification
		// before the shopper came back: thank them as the return would.
		next := "/orders/" + url.PathEscape(o.Ref)
		if s.paid == ref {
			next += "?thanks=1"
		}
		d.save(w, r, s)
		http.Redirect(w, r, next, http.StatusSeeOther)
		return
	}
	loc := d.locale(r, s)
	cart := d.cartView(s, loc)
	if ref == "" || ref != s.state.Order || cart.Count == 0 {
		d.problem(w, r, http.StatusBadRequest, "unverified", "this payment is not for the order in your cart")
		return
	}
	ch, err := d.fetchCharge(r.Context(), id.String())
	if errors.Is(err, errChargeUnknown) {
		d.problem(w, r, http.StatusBadRequest, "unverified", err.Error())
		return
	}
	if err != nil {
		d.log.Warn("demo: verifying a charge", "charge", id, "error", err)
		d.problem(w, r, http.StatusBadGateway, "unverified", err.Error())
		return
	}
	if problem := ch.mismatch(d.cfg.StoreID, cart.Total, shopCurrency, ref); problem != "" {
		d.problem(w, r, http.StatusBadRequest, "unverified", problem)
		return
	}
	// A konbini payment or a bank transfer awaits its shopper for days:
	// the order is placed now, awaiting payment, with what the shopper
	// pays with; the gateway's notification pays it.
	var paymentType string
	var sl *slip
	if ch.Status == "awaiting" {
		if paymentType, sl, err = d.fetchSlip(r.Context(), id.String()); err != nil {
			d.log.Warn("demo: reading a charge's instructions", "charge", id, "error", err)
		}
	}
	switch {
	case ch.Status == "successful" || ch.Status == "authorized" || sl != nil:
	case ch.Status == "pending" || ch.Status == "awaiting":
		p := d.page(r, s, "e_pending_title")
		p.ProblemTitle, p.ProblemText = p.Title, p.T["e_pending_text"]
		p.Retry = &retry{Order: ref, ChargeID: id.String(), Method: method}
		d.save(w, r, s)
		d.render(w, http.StatusAccepted, "demo_problem.html", p, false)
		return
	default:
		d.problem(w, r, http.StatusPaymentRequired, "declined", "charge status: "+ch.Status)
		return
	}
	var items []orderItem
	for _, l := range cart.Lines {
		items = append(items, orderItem{Product: l.Product.ID, Name: l.Product.Name, NameJA: l.Product.NameJA,
			Qty: l.Qty, Price: l.Product.Price})
	}
	o := d.chargeOrder(ch, ref, method, items)
	if sl != nil {
		o.Status, o.PaymentType, o.Slip = orderAwaiting, paymentType, sl
	}
	if err := d.orders.add(o); err != nil {
		if errors.Is(err, errDuplicateOrder) {
			http.Redirect(w, r, "/orders/"+url.PathEscape(ref), http.StatusSeeOther)
			return
		}
		d.log.Error("demo: saving the order", "error", err)
		d.problem(w, r, http.StatusInternalServerError, "internal", "")
		return
	}
	d.log.Info("demo: order placed", "order", ref, "charge", ch.ID, "method", method, "status", o.Status)
	if err := d.checkouts.remove(ref); err != nil {
		d.log.Warn("demo: forgetting a placed checkout", "order", ref, "error", err)
	}
	s.state.Cart, s.state.Order = map[string]int{}, ""
	d.save(w, r, s)
	http.Redirect(w, r, "/orders/"+url.PathEscape(ref)+"?thanks=1", http.StatusSeeOther)
}

// methodNotified is the method of an order the gateway's notification
// (its webhook) paid: the shop does not know how the shopper paid.
const methodNotified = "webhook"

// order is a placed order: paid by a charge, or by a subscription (whose
// first charge, if it had one when the order was placed, is ChargeID), or
// awaiting a konbini payment or a bank transfer (slip.go).
type order struct {
	Ref            string `json:"ref"`
	ChargeID       string `json:"charge_id"`
	SubscriptionID string `json:"subscription_id,omitempty"`
	TokenID        string `json:"token_id,omitempty"`
	// Status is the charge's, or the subscription's as last heard; an
	// order paid away from the shop is awaiting until it ends (slip.go).
	Status   string `json:"status"`
	Mode     string `json:"mode,omitempty"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Period is a subscription's: the amount is due every period.
	Period    string      `json:"period,omitempty"`
	Method    string      `json:"method"`
	Items     []orderItem `json:"items"`
	CreatedAt time.Time   `json:"created_at"`
	// PaymentType is konbini or bank_transfer for an order paid away
	// from the shop, after it was placed; Slip is what its shopper pays
	// with; Deposited and TransferStatus a bank transfer's deposits so
	// far, as the gateway last said; EndedAt when it was paid or ended
	// unpaid.
	PaymentType    string     `json:"payment_type,omitempty"`
	Slip           *slip      `json:"slip,omitempty"`
	Deposited      int64      `json:"deposited,omitempty"`
	TransferStatus string     `json:"transfer_status,omitempty"`
	EndedAt        *time.Time `json:"ended_at,omitempty"`
}

type orderItem struct {
	Product string `json:"product"`
	Name    string `json:"name"`
	NameJA  string `json:"name_ja,omitempty"`
	Qty     int    `json:"qty"`
	Price   int64  `json:"price"`
}

type orderView struct {
	*order
	When        string
	AmountText  string
	StatusText  string
	MethodText  string
	ItemSummary string
	Lines       []cartLine
	// Pay is what the shopper of an order paid away from the shop pays
	// with; EndedText when it was paid or ended unpaid.
	Pay       *slipView
	EndedText string
}

func (o *order) view(loc message.Locale) orderView {
	t := message.Demo.In(loc)
	v := orderView{order: o, StatusText: t["status_"+o.Status], MethodText: t["method_"+o.Method]}
	// A charge's order speaks of the order (canceled: not paid), a
	// subscription's of the subscription (canceled: ended).
	if text := t["order_status_"+o.Status]; text != "" && o.SubscriptionID == "" {
		v.StatusText = text
	}
	if o.PaymentType != "" {
		v.MethodText = cmp.Or(t["pt_"+o.PaymentType], o.PaymentType)
		v.Pay = o.slipView(loc)
	}
	v.When = when(o.CreatedAt, loc)
	if o.EndedAt != nil {
		v.EndedText = when(*o.EndedAt, loc)
	}
	v.AmountText = orderAmount(o.Amount, o.Currency)
	if o.Period != "" {
		v.AmountText = periodic(loc, o.Amount, o.Currency, o.Period)
	}
	var names []string
	for _, it := range o.Items {
		name := it.Name
		if loc == message.Japanese && it.NameJA != "" {
			name = it.NameJA
		}
		p, _ := productByID(it.Product)
		if it.Product == coffeePlan.ID {
			p = product{ID: coffeePlan.ID, Image: coffeePlan.Image}
		}
		v.Lines = append(v.Lines, cartLine{Product: p, Name: name, Qty: it.Qty, Total: it.Price * int64(it.Qty)})
		names = append(names, fmt.Sprintf("%s × %d", name, it.Qty))
	}
	v.ItemSummary = strings.Join(names, ", ")
	if v.StatusText == "" {
		v.StatusText = o.Status
	}
	return v
}

// orderBook are the shop's orders, kept in a JSON file.
type orderBook struct {
	mu     sync.Mutex
	path   string
	orders []*order // oldest first
}

var errDuplicateOrder = errors.New("order already recorded")

func loadOrders(path string, log *slog.Logger) (*orderBook, error) {
	o := &orderBook{path: path}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return o, nil
	case err != nil:
		return nil, err
	}
	var file struct {
		Orders []*order `json:"orders"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		// Keep the unreadable file for a human and start afresh.
		aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405")
		log.Warn("demo: orders file unreadable; moved aside", "path", path, "to", aside, "error", err)
		if err := os.Rename(path, aside); err != nil {
			return nil, err
		}
		return o, nil
	}
	o.orders = file.Orders
	return o, nil
}

func (o *orderBook) list() []*order {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := slices.Clone(o.orders)
	slices.Reverse(out)
	return out
}

func (o *orderBook) get(ref string) (*order, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if x.Ref == ref {
			return x, true
		}
	}
	return nil, false
}

func (o *orderBook) byCharge(id string) (*order, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if id != "" && strings.EqualFold(x.ChargeID, id) {
			return x, true
		}
	}
	return nil, false
}

func (o *orderBook) bySubscription(id string) (*order, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if id != "" && strings.EqualFold(x.SubscriptionID, id) {
			return x, true
		}
	}
	return nil, false
}

// add records an order; one with the reference, the charge or the
// subscription of a recorded order is errDuplicateOrder.
func (o *orderBook) add(n *order) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, x := range o.orders {
		if x.Ref == n.Ref || n.ChargeID != "" && strings.EqualFold(x.ChargeID, n.ChargeID) ||
			n.SubscriptionID != "" && strings.EqualFold(x.SubscriptionID, n.SubscriptionID) {
			return errDuplicateOrder
		}
	}
	return o.write(append(slices.Clone(o.orders), n))
}

// setStatus records an order's new status (its subscription's).
func (o *orderBook) setStatus(ref, status string) error {
	return o.update(ref, func(x *order) bool {
		x.Status = status
		return true
	})
}

// update changes an order with change, which reports whether it changed
// anything, and saves it if so. change is given a copy: the order the
// pages may be reading is left as it was.
func (o *orderBook) update(ref string, change func(*order) bool) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := slices.IndexFunc(o.orders, func(x *order) bool { return x.Ref == ref })
	if i < 0 {
		return nil
	}
	changed := *o.orders[i]
	if !change(&changed) {
		return nil
	}
	next := slices.Clone(o.orders)
	next[i] = &changed
	return o.write(next)
}

// write replaces the orders with next, in memory and in the file.
func (o *orderBook) write(next []*order) error {
	b, err := json.MarshalIndent(struct {
		Orders []*order `json:"orders"`
	}{next}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(o.path, append(b, '\n')); err != nil {
		return err
	}
	o.orders = next
	return nil
}

// writeFileAtomic replaces a file so that readers see the old content or
// the new, never a part: a temporary file in the same directory, synced,
// then renamed over the old one.
func writeFileAtomic(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	// Make the rename itself durable.
	if dh, derr := os.Open(dir); derr == nil {
		_ = dh.Sync()
		dh.Close()
	}
	return nil
}
