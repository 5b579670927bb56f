package console

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// A konbini payment or a bank transfer is paid away from any page, after
// the charge is made: its page shows what the customer pays with (the
// store's payment and confirmation numbers, or the virtual account), the
// deadline and how often it was extended, and for a bank transfer the
// deposits so far and the ledger's lines. The merchant may extend the
// deadline or cancel a charge that still awaits its customer, and in test
// mode do what the sandbox's test helpers do (paid at the counter, a
// deposit, the deadline passing now), through the same service calls.

// Slips is what a konbini or bank-transfer charge's page asks besides
// Payments: what the customer pays with (the charge's issuer token while
// it awaits them, its token's data), the deadline and its extension, the
// bank transfer's ledger, and the sandbox's simulation of the customer.
type Slips interface {
	ChargeIssuerToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.IssuerToken, error)
	Token(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, wait time.Duration) (*payment.TransactionToken, error)
	ChargeExpiry(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.Expiry, error)
	ExtendExpiry(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, x payment.ExpiryExtension) (*payment.Expiry, error)
	TransferLedger(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ListParams) (*payment.TransferLedger, error)
	SimulateShopper(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, action payment.ApprovalAction, amount int64, wait time.Duration) (*payment.Charge, error)
}

// slipRoutes serves the actions on a konbini or bank-transfer charge.
func (c *console) slipRoutes(r *mux.Router) {
	c.handle(r, http.MethodPost, "/console/stores/{store}/charges/{charge}/expiry", c.signedIn(c.extendExpiry))
	c.handle(r, http.MethodPost, "/console/stores/{store}/charges/{charge}/simulate", c.signedIn(c.simulate))
}

// paidAway reports whether a charge is paid away from any page, with a
// deadline: a konbini payment or a bank transfer.
func paidAway(ch *payment.Charge) bool {
	return ch.PaymentType == payment.PaymentTypeKonbini || ch.PaymentType == payment.PaymentTypeBankTransfer
}

// slipView is what a konbini or bank-transfer charge's page shows besides
// any charge's facts.
type slipView struct {
	Konbini bool
	// URL is the customer's instructions page, while the charge awaits
	// them; PaymentNumber and ConfirmationNumber are shown only then.
	URL                string
	Store              string
	PaymentNumber      string
	ConfirmationNumber string
	CustomerName       string
	Phone              string
	Account            *payment.VirtualAccount
	// Deadline is zero before the charge awaits its customer.
	Deadline      time.Time
	Extensions    int
	MaxExtensions int
	// A bank transfer's deposits: the ledger's lines, oldest first, and
	// where they stand against the amount.
	Entries       []ledgerRow
	Deposited     int64
	PaymentStatus payment.TransferPaymentStatus
	Progress      string
	Short, Over   string
	MatchRule     payment.MatchAmount
	// The actions the charge's state allows (the service decides):
	// extending the deadline and, in test mode, simulating the customer
	// (paying at the counter or letting the deadline pass while it
	// awaits; a deposit at any time once it awaited).
	CanExtend   bool
	CanSimulate bool
	CanDeposit  bool
	// Ended: the charge no longer awaits its customer (a deposit is
	// still recorded, for the merchant to return or keep).
	Ended bool
	// ExtendDays and DepositAmount are the forms' values, kept when an
	// action fails.
	ExtendDays    string
	DepositAmount string
	MaxDays       int
}

// ledgerRow is a line of a bank transfer's ledger.
type ledgerRow struct {
	*payment.TransferEntry
}

// slipFor reads what a konbini or bank-transfer charge's page shows.
func (c *console) slipFor(cr *consoleRequest, caller *payment.Caller, ch *payment.Charge) (*slipView, error) {
	ctx := cr.r.Context()
	v := &slipView{Konbini: ch.PaymentType == payment.PaymentTypeKonbini, MaxExtensions: payment.MaxExpiryExtensions,
		MaxDays: maxExtendDays, ExtendDays: "7"}
	tok, err := c.svc.Token(ctx, caller, ch.StoreID, ch.TokenID, 0)
	if err != nil {
		return nil, err
	}
	d := tok.Data
	v.Store, v.CustomerName, v.Account = d.ConvenienceStore, d.CustomerName, d.VirtualAccount
	if p := d.PhoneNumber; p != nil {
		v.Phone = "+" + strconv.Itoa(p.CountryCode) + " " + p.LocalNumber
	}
	if ch.Status == payment.ChargeAwaiting {
		it, err := c.svc.ChargeIssuerToken(ctx, caller, ch.StoreID, ch.ID)
		switch {
		case err == nil:
			v.URL = it.IssuerToken
			v.PaymentNumber, v.ConfirmationNumber = it.Payload["payment_number"], it.Payload["confirmation_number"]
			if it.Account != nil {
				v.Account = it.Account
			}
		case payment.ErrorCode(err) != payment.CodeValidation:
			// A validation error: the charge stopped awaiting since it
			// was read; the page shows it as it was.
			return nil, err
		}
	}
	e, err := c.svc.ChargeExpiry(ctx, caller, ch.StoreID, ch.ID)
	switch {
	case err == nil:
		v.Deadline, v.Extensions = e.ExpirationDate, e.ExtensionCount
	case !payment.IsNotFound(err):
		return nil, err
	}
	if !v.Konbini {
		l, err := c.svc.TransferLedger(ctx, caller, ch.StoreID, ch.ID, payment.ListParams{Limit: payment.MaxLimit, Direction: payment.Asc})
		if err != nil {
			return nil, err
		}
		for _, e := range l.Page.Items {
			v.Entries = append(v.Entries, ledgerRow{e})
			v.Deposited, v.PaymentStatus = e.Deposited, e.PaymentStatus
		}
		if v.PaymentStatus == "" {
			v.PaymentStatus = payment.TransferUnpaid
		}
		t := message.Console.In(cr.loc)
		v.Progress = fmt.Sprintf(t["transfer_progress"], site.Amount(v.Deposited, ch.Currency), site.Amount(ch.RequestedAmount, ch.Currency))
		switch {
		case v.Deposited < ch.RequestedAmount && ch.Status == payment.ChargeAwaiting:
			v.Short = site.Amount(ch.RequestedAmount-v.Deposited, ch.Currency)
		case v.Deposited > ch.RequestedAmount:
			v.Over = site.Amount(v.Deposited-ch.RequestedAmount, ch.Currency)
		}
		v.MatchRule = payment.MatchMinimum
		for _, st := range cr.stores {
			if st.ID == ch.StoreID {
				v.MatchRule = st.Settings.TransferMatch()
			}
		}
	}
	awaiting := ch.Status == payment.ChargeAwaiting && !v.Deadline.IsZero()
	v.CanExtend = awaiting && v.Extensions < payment.MaxExpiryExtensions
	test := caller.Mode() == payment.ModeTest
	v.CanSimulate = test && awaiting
	v.CanDeposit = test && !v.Konbini && !v.Deadline.IsZero()
	v.Ended = ch.Status != payment.ChargeAwaiting && ch.Status != payment.ChargePending
	return v, nil
}

// maxExtendDays is the most days the form offers to move a deadline by
// (the service's MaxExpiryExtension).
var maxExtendDays = int(payment.MaxExpiryExtension / (24 * time.Hour))

// extendExpiry moves a charge's payment deadline later by whole days,
// after the confirmation.
func (c *console) extendExpiry(cr *consoleRequest) error {
	a, err := c.actionRequest(cr)
	if err != nil {
		return err
	}
	days, err := strconv.Atoi(strings.TrimSpace(cr.r.PostForm.Get("days")))
	if err != nil || days < 1 || days > maxExtendDays {
		return c.actionDone(cr, a, payment.Invalid("days", payment.ReasonInvalidFormat), "")
	}
	by := time.Duration(days) * 24 * time.Hour
	if !confirmed(cr) {
		e, err := c.svc.ChargeExpiry(cr.r.Context(), a.caller, a.storeID, a.chargeID)
		if err != nil {
			return c.actionDone(cr, a, err, "")
		}
		until := e.ExpirationDate.Add(by)
		_, err = c.confirmCharge(cr, a, chargeConfirmView{Action: "extend", Route: "expiry", Deadline: e.ExpirationDate, NewDeadline: until,
			Days: days, ExtensionNumber: e.ExtensionCount + 1, MaxExtensions: payment.MaxExpiryExtensions})
		return err
	}
	_, err = c.svc.ExtendExpiry(cr.r.Context(), a.caller, a.storeID, a.chargeID, payment.ExpiryExtension{Period: &by})
	return c.actionDone(cr, a, err, "n_expiry_extended")
}

// simulations are the sandbox's test helpers the console offers.
var simulations = map[string]payment.ApprovalAction{
	"pay": payment.ActionPay, "deposit": payment.ActionDeposit, "expire": payment.ActionExpire,
}

// simulate does, in test mode, what the customer does away from any page,
// as the sandbox's test helpers do, after the confirmation.
func (c *console) simulate(cr *consoleRequest) error {
	a, err := c.actionRequest(cr)
	if err != nil {
		return err
	}
	form := cr.r.PostForm
	name := form.Get("action")
	action, ok := simulations[name]
	if !ok {
		return c.actionDone(cr, a, payment.Invalid("action", payment.ReasonInvalidFormat), "")
	}
	var amount int64
	cv := chargeConfirmView{Action: "simulate_" + name, Route: "simulate"}
	if action == payment.ActionDeposit {
		n, currency, err := formAmount(form)
		if err == nil && n == nil {
			err = payment.Invalid("amount", payment.ReasonRequired)
		}
		if err != nil {
			return c.actionDone(cr, a, err, "")
		}
		amount, cv.Amount, cv.AmountText = *n, form.Get("amount"), site.Amount(*n, currency)
	}
	if ok, err := c.confirmCharge(cr, a, cv); !ok || err != nil {
		return err
	}
	_, err = c.svc.SimulateShopper(cr.r.Context(), a.caller, a.storeID, a.chargeID, action, amount, 0)
	return c.actionDone(cr, a, err, "n_simulated_"+name)
}

// keepSlipForm puts back, on a charge's page shown after a failed action,
// what its slip forms held.
func keepSlipForm(v *slipView, path string, form map[string][]string) {
	get := func(k string) string {
		if vs := form[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	switch {
	case strings.HasSuffix(path, "/expiry"):
		v.ExtendDays = get("days")
	case strings.HasSuffix(path, "/simulate") && get("action") == "deposit":
		v.DepositAmount = get("amount")
	}
}
