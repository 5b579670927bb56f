package demo

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/kessai/kessai/web/message"
)

// Konbini payments and bank transfers are paid after the order, away from
// the shop: the widget hands the page a charge that awaits its shopper,
// and the shop records the order as awaiting payment, with what the
// shopper pays with (the store's payment numbers, or the account to wire
// the money to) and the deadline, read from the charge's issuer token with
// the secret. The order is paid when the gateway says so — its
// charge_finished notification, possibly days later on the gateway's
// clock — and a bank transfer's deposits so far follow its
// bank_transfer_status_updated notifications. A deadline that passes (the
// charge fails, 327) or a charge the merchant cancels ends the order
// unpaid. The order page asks the gateway again while the order awaits
// payment, so that it is right even for a shop whose notifications do not
// reach it.

// The payment types paid away from the shop (the gateway's names).
const (
	paymentKonbini      = "konbini"
	paymentBankTransfer = "bank_transfer"
)

// The statuses of an order paid away from the shop, besides the charge's
// own successful: awaiting its payment; ended unpaid because its deadline
// passed, because the charge was canceled, or otherwise.
const (
	orderAwaiting = "awaiting"
	orderExpired  = "expired"
	orderCanceled = "canceled"
	orderFailed   = "failed"
)

// codeConfirmationExpired is the charge error of a payment whose deadline
// passed (UnivaPay's CONFIRMATION_PERIOD_EXPIRED).
const codeConfirmationExpired = 327

// slip is what the shopper of an order awaiting payment pays with, as the
// charge's issuer token says.
type slip struct {
	// URL is the issuer token: the page with the instructions.
	URL                string `json:"url"`
	ConvenienceStore   string `json:"convenience_store,omitempty"`
	PaymentNumber      string `json:"payment_number,omitempty"`
	ConfirmationNumber string `json:"confirmation_number,omitempty"`
	BankName           string `json:"bank_name,omitempty"`
	BankCode           string `json:"bank_code,omitempty"`
	BranchName         string `json:"branch_name,omitempty"`
	BranchCode         string `json:"branch_code,omitempty"`
	AccountType        string `json:"account_type,omitempty"`
	AccountNumber      string `json:"account_number,omitempty"`
	AccountHolder      string `json:"account_holder,omitempty"`
	// Deadline is when the shopper must have paid, on the gateway's
	// clock.
	Deadline time.Time `json:"deadline"`
}

// issuerTokenAnswer is the gateway's GET …/charges/{id}/issuer_token.
type issuerTokenAnswer struct {
	IssuerToken string         `json:"issuer_token"`
	PaymentType string         `json:"payment_type"`
	Payload     map[string]any `json:"payload"`
}

func (d *shop) chargePath(id string) string {
	return "/stores/" + url.PathEscape(d.cfg.StoreID) + "/charges/" + url.PathEscape(id)
}

// fetchSlip reads what the shopper of an awaiting charge pays with. A
// charge the gateway sends no konbini or bank-transfer shopper to (a
// card's challenge, a wallet) is nil, with no error.
func (d *shop) fetchSlip(ctx context.Context, chargeID string) (string, *slip, error) {
	var it issuerTokenAnswer
	err := d.callGateway(ctx, http.MethodGet, d.chargePath(chargeID)+"/issuer_token", nil, &it)
	var ge *gatewayError
	if errors.As(err, &ge) && ge.Status >= 400 && ge.Status < 500 {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	if it.PaymentType != paymentKonbini && it.PaymentType != paymentBankTransfer {
		return "", nil, nil
	}
	u, err := url.Parse(it.IssuerToken)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", nil, fmt.Errorf("the charge's instructions are not at a web address: %q", it.IssuerToken)
	}
	p := func(k string) string { return metadataString(it.Payload, k) }
	deadline, err := time.Parse(time.RFC3339, p("expiration_date"))
	if err != nil {
		return "", nil, errors.New("the charge's instructions have no deadline")
	}
	return it.PaymentType, &slip{
		URL: u.String(), ConvenienceStore: p("convenience_store"), PaymentNumber: p("payment_number"),
		ConfirmationNumber: p("confirmation_number"), BankName: p("bank_name"), BankCode: p("bank_code"),
		BranchName: p("branch_name"), BranchCode: p("branch_code"), AccountType: p("account_type"),
		AccountNumber: p("account_number"), AccountHolder: p("account_holder_name"), Deadline: deadline.UTC(),
	}, nil
}

// endOf is the order status a charge that no longer awaits its shopper
// leaves its order in; "" while it awaits.
func endOf(ch *gatewayCharge) string {
	switch ch.Status {
	case "successful", "authorized":
		return "successful"
	case "canceled":
		return orderCanceled
	case "failed", "error":
		if ch.Error != nil && ch.Error.Code == codeConfirmationExpired {
			return orderExpired
		}
		return orderFailed
	}
	return ""
}

// slipOrderNews applies to an order awaiting payment what its charge now
// says: its end, or a deadline moved later. A deadline only ever moves
// later (an extension): a notification delivered after a later one, with
// the deadline before the extension, changes nothing.
func (d *shop) slipOrderNews(o *order, ch *gatewayCharge) error {
	end := endOf(ch)
	return d.orders.update(o.Ref, func(x *order) bool {
		if x.Status != orderAwaiting {
			return false
		}
		if end != "" {
			x.Status = end
			now := d.now().UTC()
			x.EndedAt = &now
			return true
		}
		if ch.CaptureAt != nil && x.Slip != nil && ch.CaptureAt.After(x.Slip.Deadline) {
			s := *x.Slip
			s.Deadline = ch.CaptureAt.UTC()
			x.Slip = &s
			return true
		}
		return false
	})
}

// refreshSlipOrder asks the gateway about an order awaiting payment: its
// charge, and while that still awaits, its instructions and (for a bank
// transfer) its deposits so far. It reports whether the gateway answered.
func (d *shop) refreshSlipOrder(ctx context.Context, o *order) bool {
	ctx, cancel := context.WithTimeout(ctx, subscriptionTimeout)
	defer cancel()
	ch, err := d.fetchCharge(ctx, o.ChargeID)
	if err == nil {
		if problem := ch.mismatch(d.cfg.StoreID, o.Amount, o.Currency, o.Ref); problem != "" {
			err = errors.New(problem)
		}
	}
	if err != nil {
		d.log.Warn("demo: reading an order's charge", "order", o.Ref, "error", err)
		return false
	}
	if end := endOf(ch); end != "" {
		if err := d.slipOrderNews(o, ch); err != nil {
			d.log.Error("demo: saving an order's end", "order", o.Ref, "error", err)
		}
		return true
	}
	_, sl, err := d.fetchSlip(ctx, o.ChargeID)
	if err != nil || sl == nil {
		d.log.Warn("demo: reading an order's instructions", "order", o.Ref, "error", err)
		return false
	}
	status, deposited := "", int64(-1)
	if o.PaymentType == paymentBankTransfer {
		var ledger struct {
			Items []struct {
				Deposited     int64  `json:"deposited"`
				PaymentStatus string `json:"payment_status"`
			} `json:"items"`
		}
		if err := d.callGateway(ctx, http.MethodGet, d.chargePath(o.ChargeID)+"/bank_transfer_ledgers?limit=1", nil, &ledger); err != nil {
			d.log.Warn("demo: reading an order's deposits", "order", o.Ref, "error", err)
		} else if len(ledger.Items) > 0 {
			status, deposited = ledger.Items[0].PaymentStatus, ledger.Items[0].Deposited
		}
	}
	err = d.orders.update(o.Ref, func(x *order) bool {
		if x.Status != orderAwaiting {
			return false
		}
		changed := x.Slip == nil || *x.Slip != *sl
		x.Slip = sl
		if deposited >= x.Deposited && (deposited != x.Deposited || status != x.TransferStatus) {
			x.Deposited, x.TransferStatus, changed = deposited, status, true
		}
		return changed
	})
	if err != nil {
		d.log.Error("demo: saving an order's instructions", "order", o.Ref, "error", err)
	}
	return true
}

// transferStatus is the bank_transfer_status_updated notification's data,
// as far as the shop reads it.
type transferStatus struct {
	ChargeID      string `json:"charge_id"`
	StoreID       string `json:"store_id"`
	PaymentStatus string `json:"payment_status"`
	Deposited     int64  `json:"deposited"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
}

var errNotATransfer = errors.New("not a bank transfer's status")

// transferEvent takes a bank_transfer_status_updated notification: the
// order of the charge records the deposits so far. Deposits only add up,
// so a notification delivered late (after a later one) changes nothing.
func (d *shop) transferEvent(data json.RawMessage) error {
	var st transferStatus
	if err := json.Unmarshal(data, &st); err != nil || st.ChargeID == "" {
		return errNotATransfer
	}
	if !strings.EqualFold(st.StoreID, d.cfg.StoreID) {
		return nil
	}
	o, ok := d.orders.byCharge(st.ChargeID)
	if !ok {
		d.log.Info("demo: deposits to a charge of no order", "charge", st.ChargeID)
		return nil
	}
	if o.PaymentType != paymentBankTransfer || st.Amount != o.Amount || !strings.EqualFold(st.Currency, o.Currency) {
		d.log.Warn("demo: a transfer's status does not match its order", "order", o.Ref, "charge", st.ChargeID)
		return nil
	}
	d.log.Info("demo: deposits", "order", o.Ref, "deposited", st.Deposited, "status", st.PaymentStatus)
	return d.orders.update(o.Ref, func(x *order) bool {
		if st.Deposited < x.Deposited || st.Deposited == x.Deposited && st.PaymentStatus == x.TransferStatus {
			return false
		}
		x.Deposited, x.TransferStatus = st.Deposited, st.PaymentStatus
		return true
	})
}

// awaitingNotified takes a charge_updated notification: an order awaiting
// payment follows its deadline; a charge awaiting a konbini or
// bank-transfer payment for an order the shopper never came back to the
// shop for records that order, awaiting payment, with the checks of the
// shopper's return.
func (d *shop) awaitingNotified(ctx context.Context, ch *gatewayCharge) error {
	if !strings.EqualFold(ch.StoreID, d.cfg.StoreID) {
		return nil
	}
	if o, ok := d.orders.byCharge(ch.ID); ok {
		if o.Status != orderAwaiting || ch.Status != "awaiting" {
			return nil
		}
		return d.slipOrderNews(o, ch)
	}
	ref := metadataString(ch.Metadata, metaOrderID)
	if ref == "" || ch.Status != "awaiting" {
		return nil
	}
	if _, ok := d.orders.get(ref); ok {
		return nil
	}
	co, ok := d.checkouts.get(ref)
	if !ok || co.Period != "" {
		return nil
	}
	if problem := ch.mismatch(d.cfg.StoreID, co.Amount, co.Currency, ref); problem != "" {
		d.log.Warn("demo: a notified charge does not pay its order", "order", ref, "charge", ch.ID, "problem", problem)
		return nil
	}
	pt, sl, err := d.fetchSlip(ctx, ch.ID)
	if err != nil || sl == nil {
		return err
	}
	o := d.chargeOrder(ch, ref, methodNotified, co.Items)
	o.Status, o.PaymentType, o.Slip = orderAwaiting, pt, sl
	if err := d.orders.add(o); err != nil {
		if errors.Is(err, errDuplicateOrder) {
			return nil
		}
		return err
	}
	d.log.Info("demo: order awaiting payment", "order", ref, "charge", ch.ID, "payment_type", pt, "method", methodNotified)
	if err := d.checkouts.remove(ref); err != nil {
		d.log.Warn("demo: forgetting a placed checkout", "order", ref, "error", err)
	}
	return nil
}

// slipView is what the order page shows of an order paid away from the
// shop.
type slipView struct {
	*slip
	Konbini      bool
	StoreName    string
	AccountType  string
	DeadlineText string
	// Deposits: what was received of the amount, as the bank last said;
	// Short is what is still missing, Over what was sent too much.
	Received string
	Short    string
	Over     string
}

// jst is where the shop's customers read times.
var jst = time.FixedZone("JST", 9*3600)

// when writes a time as the shop's pages do, in Japan's time.
func when(t time.Time, loc message.Locale) string {
	if loc == message.Japanese {
		return t.In(jst).Format("2006/01/02 15:04")
	}
	return t.In(jst).Format("2 Jan 2006, 15:04 MST")
}

func (o *order) slipView(loc message.Locale) *slipView {
	if o.Slip == nil {
		return nil
	}
	t := message.Demo.In(loc)
	v := &slipView{slip: o.Slip, Konbini: o.PaymentType == paymentKonbini, DeadlineText: when(o.Slip.Deadline, loc)}
	v.StoreName = cmp.Or(t["konbini_"+o.Slip.ConvenienceStore], o.Slip.ConvenienceStore)
	v.AccountType = cmp.Or(t["account_"+o.Slip.AccountType], o.Slip.AccountType)
	if o.PaymentType == paymentBankTransfer && o.Deposited > 0 {
		v.Received = fmt.Sprintf(t["transfer_received"], orderAmount(o.Deposited, o.Currency), orderAmount(o.Amount, o.Currency))
		switch {
		case o.Deposited < o.Amount:
			v.Short = orderAmount(o.Amount-o.Deposited, o.Currency)
		case o.Deposited > o.Amount:
			v.Over = orderAmount(o.Deposited-o.Amount, o.Currency)
		}
	}
	return v
}

// chargeOrder is the order a verified charge pays (or will pay).
func (d *shop) chargeOrder(ch *gatewayCharge, ref, method string, items []orderItem) *order {
	return &order{
		Ref: ref, ChargeID: ch.ID, TokenID: ch.TransactionTokenID, Status: ch.Status, Mode: ch.Mode,
		Amount: ch.RequestedAmount, Currency: strings.ToUpper(ch.RequestedCurrency), Method: method,
		Items: items, CreatedAt: d.now().UTC(),
	}
}
