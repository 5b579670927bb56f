package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/web/message"
)

// The storefront also sells a subscription: coffee beans every month. Its
// page (GET /subscribe) opens the gateway's widget for a subscription
// checkout (tokenType "subscription", subscriptionPeriod "monthly"), which
// makes the subscription token, the subscription and its first charge (a
// 3-D Secure challenge included) and hands the page the subscription's
// id. The shop's server then reads the subscription with its secret, as it
// does a charge, before the order counts: its store, amount, currency,
// period and order reference must be the plan's, and it must have started
// (its first payment paid). The order page shows the subscription's status
// and its payments as the gateway has them now; the gateway's
// subscription_payment, subscription_failure and subscription_canceled
// notifications keep the recorded status current, and a
// subscription_payment for an order the shopper never came back to
// records it.

// plan is something the shop sells by subscription.
type plan struct {
	ID             string
	Name, NameJA   string
	Notes, NotesJA string
	Price          int64
	// Period is the subscription's (UnivaPay's period names).
	Period string
	Image  string
}

// coffeePlan is the shop's subscription.
var coffeePlan = plan{
	ID: "coffee-monthly", Name: "Coffee beans every month", NameJA: "毎月届くコーヒー豆",
	Notes:   "200 g of the roaster's choice, fresh from Monday's roast, every month. Cancel any time.",
	NotesJA: "月曜焙煎の焙煎士おすすめの豆 200 g を毎月お届け。いつでも解約できます。",
	Price:   1980, Period: "monthly", Image: "kyoto-dark.svg",
}

func (p plan) name(loc message.Locale) string {
	if loc == message.Japanese {
		return p.NameJA
	}
	return p.Name
}

func (p plan) notes(loc message.Locale) string {
	if loc == message.Japanese {
		return p.NotesJA
	}
	return p.Notes
}

// periodic writes an amount due every period: "¥1,980 / month".
func periodic(loc message.Locale, amount int64, currency, period string) string {
	f := message.Periods.Get(period, loc)
	if f == "" {
		return orderAmount(amount, currency) + " (" + period + ")"
	}
	return fmt.Sprintf(f, orderAmount(amount, currency))
}

// planView is what the pages show of a plan.
type planView struct {
	plan
	DisplayName  string
	DisplayNotes string
	PriceText    string
}

func (p plan) view(loc message.Locale) *planView {
	return &planView{plan: p, DisplayName: p.name(loc), DisplayNotes: p.notes(loc),
		PriceText: periodic(loc, p.Price, shopCurrency, p.Period)}
}

// subscribe is GET /subscribe: the plan and the widget that subscribes.
func (d *shop) subscribe(w http.ResponseWriter, r *http.Request) {
	s := d.session(r)
	p := d.page(r, s, "sub_title")
	p.Plan = coffeePlan.view(p.Lang)
	p.OrderRef = d.subscriptionRef(s)
	p.AppID = d.cfg.JWT
	co := &checkout{Ref: p.OrderRef, Amount: coffeePlan.Price, Currency: shopCurrency, Period: coffeePlan.Period,
		Items: []orderItem{{Product: coffeePlan.ID, Name: coffeePlan.Name, NameJA: coffeePlan.NameJA, Qty: 1, Price: coffeePlan.Price}}}
	if err := d.checkouts.put(co); err != nil {
		d.log.Warn("demo: saving the checkout", "order", p.OrderRef, "error", err)
	}
	d.save(w, r, s)
	d.render(w, http.StatusOK, "demo_subscribe.html", p, true)
}

// subscriptionRef returns the reference of the subscription being taken
// out, making one up when there is none.
func (d *shop) subscriptionRef(s *shopperSession) string {
	if s.state.Sub == "" {
		s.state.Sub = d.newRef("KS")
	}
	return s.state.Sub
}

// gatewaySubscription is the part of the gateway's subscription the shop
// checks and shows.
type gatewaySubscription struct {
	ID                 string         `json:"id"`
	StoreID            string         `json:"store_id"`
	TransactionTokenID string         `json:"transaction_token_id"`
	Amount             int64          `json:"amount"`
	Currency           string         `json:"currency"`
	Period             string         `json:"period"`
	Status             string         `json:"status"`
	Mode               string         `json:"mode"`
	Metadata           map[string]any `json:"metadata"`
	NextPayment        *struct {
		DueDate string `json:"due_date"`
	} `json:"next_payment"`
}

// mismatch says why sub does not pay the order ref of amount in currency
// every period, "" when it does.
func (sub *gatewaySubscription) mismatch(storeID string, amount int64, currency, period, ref string) string {
	switch {
	case !strings.EqualFold(sub.StoreID, storeID):
		return "the subscription belongs to another store"
	case sub.Amount != amount:
		return fmt.Sprintf("the subscription is for %d, the plan costs %d", sub.Amount, amount)
	case !strings.EqualFold(sub.Currency, currency):
		return "the subscription's currency is " + sub.Currency
	case sub.Period != period:
		return "the subscription's period is not the plan's"
	case metadataString(sub.Metadata, metaOrderID) != ref:
		return "the subscription is for another order"
	}
	return ""
}

// started reports whether a subscription has started: its first payment
// is paid (or was not due yet), and nothing has ended it.
func (sub *gatewaySubscription) started() bool {
	return sub.Status == "current" || sub.Status == "completed"
}

// scheduledPayment is one of a subscription's payments, as the gateway
// lists them.
type scheduledPayment struct {
	ID        string  `json:"id"`
	DueDate   string  `json:"due_date"`
	Amount    int64   `json:"amount"`
	Currency  string  `json:"currency"`
	IsPaid    bool    `json:"is_paid"`
	RetryDate *string `json:"retry_date"`
	CreatedOn string  `json:"created_on"`
}

// subscriptionPath is a subscription's address on the gateway's API.
func (d *shop) subscriptionPath(id string) string {
	return "/stores/" + url.PathEscape(d.cfg.StoreID) + "/subscriptions/" + url.PathEscape(id)
}

// fetchSubscription asks the gateway about a subscription with the secret,
// waiting a little while its first charge is under way.
func (d *shop) fetchSubscription(ctx context.Context, id string) (*gatewaySubscription, error) {
	var sub gatewaySubscription
	err := d.callGateway(ctx, http.MethodGet, d.subscriptionPath(id)+"?polling=true", nil, &sub)
	var ge *gatewayError
	if errors.As(err, &ge) && ge.Status == http.StatusNotFound {
		return nil, errSubscriptionUnknown
	}
	if err != nil {
		return nil, err
	}
	if !strings.EqualFold(sub.ID, id) {
		return nil, errors.New("the gateway answered with another subscription")
	}
	return &sub, nil
}

// errSubscriptionUnknown is the gateway's 404: no such subscription in the
// shop's store.
var errSubscriptionUnknown = errors.New("the gateway knows no such subscription in this store")

// maxShownPayments bounds the payments an order page lists: years of
// months.
const maxShownPayments = 100

// fetchPayments lists a subscription's payments, oldest first.
func (d *shop) fetchPayments(ctx context.Context, id string) ([]scheduledPayment, error) {
	var page struct {
		Items []scheduledPayment `json:"items"`
	}
	q := url.Values{"limit": {fmt.Sprint(maxShownPayments)}}
	if err := d.callGateway(ctx, http.MethodGet, d.subscriptionPath(id)+"/payments?"+q.Encode(), nil, &page); err != nil {
		return nil, err
	}
	slices.SortStableFunc(page.Items, func(a, b scheduledPayment) int {
		if c := strings.Compare(a.DueDate, b.DueDate); c != 0 {
			return c
		}
		return strings.Compare(a.CreatedOn, b.CreatedOn)
	})
	return page.Items, nil
}

// firstChargeID is the id of a subscription's first charge, "" when it has
// none or the gateway does not say.
func (d *shop) firstChargeID(ctx context.Context, id string) string {
	var page struct {
		Items []gatewayCharge `json:"items"`
	}
	if err := d.callGateway(ctx, http.MethodGet, d.subscriptionPath(id)+"/charges", nil, &page); err != nil || len(page.Items) == 0 {
		return ""
	}
	return page.Items[len(page.Items)-1].ID
}

// settleSubscription verifies a subscription for the session's
// subscription order and records the order.
func (d *shop) settleSubscription(w http.ResponseWriter, r *http.Request, s *shopperSession, ref, subID, method string) {
	id, err := uuid.Parse(subID)
	if err != nil {
		d.problem(w, r, http.StatusBadRequest, "unverified", "missing or malformed subscription id")
		return
	}
	// A subscription already recorded shows its order again, and never
	// pays a second one.
	if o, ok := d.orders.bySubscription(id.String()); ok {
		if o.Ref != ref {
			d.problem(w, r, http.StatusConflict, "unverified", "this subscription already paid another order")
			return
		}
		if s.state.Sub == ref {
			s.state.Sub = ""
		}
		d.save(w, r, s)
		http.Redirect(w, r, "/orders/"+url.PathEscape(o.Ref)+"?thanks=1", http.StatusSeeOther)
		return
	}
	if ref == "" || ref != s.state.Sub {
		d.problem(w, r, http.StatusBadRequest, "unverified", "this subscription is not for the plan you chose")
		return
	}
	sub, err := d.fetchSubscription(r.Context(), id.String())
	if errors.Is(err, errSubscriptionUnknown) {
		d.problem(w, r, http.StatusBadRequest, "unverified", err.Error())
		return
	}
	if err != nil {
		d.log.Warn("demo: verifying a subscription", "subscription", id, "error", err)
		d.problem(w, r, http.StatusBadGateway, "unverified", err.Error())
		return
	}
	if problem := sub.mismatch(d.cfg.StoreID, coffeePlan.Price, shopCurrency, coffeePlan.Period, ref); problem != "" {
		d.problem(w, r, http.StatusBadRequest, "unverified", problem)
		return
	}
	switch {
	case sub.started():
	case sub.Status == "unverified":
		p := d.page(r, s, "e_pending_title")
		p.ProblemTitle, p.ProblemText = p.Title, p.T["e_pending_text"]
		p.Retry = &retry{Order: ref, SubscriptionID: id.String(), Method: method}
		d.save(w, r, s)
		d.render(w, http.StatusAccepted, "demo_problem.html", p, false)
		return
	default:
		d.problem(w, r, http.StatusPaymentRequired, "declined", "subscription status: "+sub.Status)
		return
	}
	o := d.subscriptionOrder(sub, ref, method)
	o.ChargeID = d.firstChargeID(r.Context(), sub.ID)
	if err := d.orders.add(o); err != nil {
		if errors.Is(err, errDuplicateOrder) {
			http.Redirect(w, r, "/orders/"+url.PathEscape(ref), http.StatusSeeOther)
			return
		}
		d.log.Error("demo: saving the order", "error", err)
		d.problem(w, r, http.StatusInternalServerError, "internal", "")
		return
	}
	d.log.Info("demo: subscription ordered", "order", ref, "subscription", sub.ID, "method", method)
	if err := d.checkouts.remove(ref); err != nil {
		d.log.Warn("demo: forgetting a paid checkout", "order", ref, "error", err)
	}
	s.state.Sub = ""
	d.save(w, r, s)
	http.Redirect(w, r, "/orders/"+url.PathEscape(ref)+"?thanks=1", http.StatusSeeOther)
}

// subscriptionOrder is the order a verified subscription pays.
func (d *shop) subscriptionOrder(sub *gatewaySubscription, ref, method string) *order {
	return &order{
		Ref: ref, SubscriptionID: sub.ID, TokenID: sub.TransactionTokenID, Status: sub.Status, Mode: sub.Mode,
		Amount: sub.Amount, Currency: strings.ToUpper(sub.Currency), Period: sub.Period, Method: method,
		Items:     []orderItem{{Product: coffeePlan.ID, Name: coffeePlan.Name, NameJA: coffeePlan.NameJA, Qty: 1, Price: coffeePlan.Price}},
		CreatedAt: d.now().UTC(),
	}
}

// subscriptionView is what an order page shows of its subscription, read
// from the gateway when the page is shown.
type subscriptionView struct {
	ID         string
	Status     string
	StatusText string
	Next       string
	Payments   []paymentView
	// Unavailable: the gateway could not be asked; the page shows what
	// the order recorded.
	Unavailable bool
}

type paymentView struct {
	DueDate    string
	AmountText string
	Paid       bool
	StatusText string
}

// subscriptionTimeout bounds the order page's questions to the gateway.
const subscriptionTimeout = 5 * time.Second

// subscriptionOf reads an order's subscription and its payments from the
// gateway.
func (d *shop) subscriptionOf(ctx context.Context, o *order, loc message.Locale) *subscriptionView {
	t := message.Demo.In(loc)
	v := &subscriptionView{ID: o.SubscriptionID, Status: o.Status}
	ctx, cancel := context.WithTimeout(ctx, subscriptionTimeout)
	defer cancel()
	var sub gatewaySubscription
	err := d.callGateway(ctx, http.MethodGet, d.subscriptionPath(o.SubscriptionID), nil, &sub)
	var pays []scheduledPayment
	if err == nil {
		pays, err = d.fetchPayments(ctx, o.SubscriptionID)
	}
	if err != nil {
		d.log.Warn("demo: reading an order's subscription", "order", o.Ref, "error", err)
		v.Unavailable = true
	} else {
		v.Status = sub.Status
		if sub.NextPayment != nil && !sub.ended() {
			v.Next = sub.NextPayment.DueDate
		}
		for _, p := range pays {
			pv := paymentView{DueDate: p.DueDate, AmountText: orderAmount(p.Amount, strings.ToUpper(p.Currency)), Paid: p.IsPaid}
			switch {
			case p.IsPaid:
				pv.StatusText = t["pay_paid"]
			case p.RetryDate != nil:
				pv.StatusText = fmt.Sprintf(t["pay_retry"], *p.RetryDate)
			default:
				pv.StatusText = t["pay_due"]
			}
			v.Payments = append(v.Payments, pv)
		}
	}
	v.StatusText = t["status_"+v.Status]
	if v.StatusText == "" {
		v.StatusText = v.Status
	}
	return v
}

// ended reports whether nothing more will happen to the subscription.
func (sub *gatewaySubscription) ended() bool {
	return sub.Status == "canceled" || sub.Status == "completed"
}

// subscriptionEvent takes a subscription_* notification: the order of the
// subscription follows its status, and a subscription_payment for an order
// the shopper never came back to records it, with the same checks as the
// shopper's return.
func (d *shop) subscriptionEvent(ctx context.Context, event string, data json.RawMessage) error {
	var sub gatewaySubscription
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&sub); err != nil || sub.ID == "" {
		return errNotASubscription
	}
	if !strings.EqualFold(sub.StoreID, d.cfg.StoreID) {
		return nil
	}
	if o, ok := d.orders.bySubscription(sub.ID); ok {
		if o.Status == sub.Status {
			return nil
		}
		d.log.Info("demo: subscription status", "order", o.Ref, "subscription", sub.ID, "event", event, "status", sub.Status)
		return d.orders.setStatus(o.Ref, sub.Status)
	}
	if event != "subscription_payment" {
		return nil
	}
	ref := metadataString(sub.Metadata, metaOrderID)
	if ref == "" {
		return nil // not one of the shop's orders
	}
	if _, ok := d.orders.get(ref); ok {
		d.log.Warn("demo: a second subscription for an order", "order", ref, "subscription", sub.ID)
		return nil
	}
	co, ok := d.checkouts.get(ref)
	if !ok {
		d.log.Warn("demo: a subscription for an order the shop does not know", "order", ref, "subscription", sub.ID)
		return nil
	}
	if problem := sub.mismatch(d.cfg.StoreID, co.Amount, co.Currency, co.Period, ref); problem != "" || co.Period == "" {
		d.log.Warn("demo: a notified subscription does not pay its order", "order", ref, "subscription", sub.ID, "problem", problem)
		return nil
	}
	if !sub.started() {
		return nil
	}
	o := d.subscriptionOrder(&sub, ref, methodNotified)
	o.Items = co.Items
	o.ChargeID = d.firstChargeID(ctx, sub.ID)
	if err := d.orders.add(o); err != nil {
		if errors.Is(err, errDuplicateOrder) {
			return nil
		}
		return err
	}
	d.log.Info("demo: subscription ordered", "order", ref, "subscription", sub.ID, "method", methodNotified)
	if err := d.checkouts.remove(ref); err != nil {
		d.log.Warn("demo: forgetting a paid checkout", "order", ref, "error", err)
	}
	return nil
}

var errNotASubscription = errors.New("not a subscription")
