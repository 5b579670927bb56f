package checkout

import (
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// A konbini payment or a bank transfer is paid away from any screen, with
// what its charge gives the shopper once it awaits them (its issuer
// token): a store's numbers, or an account, and the deadline. The widget
// frame's script shows them in the modal (static/widget.js, showSlip);
// the link form shows them on its result page, from slipOf, in the same
// words (message.CheckoutSlip).

// slipView is an awaiting charge's instructions, for a template.
type slipView struct {
	Title, Text string
	Rows        []slipRow
	// URL is the instructions page (the issuer token), to print or keep;
	// Open is its link's text, Keep the reminder to keep the details.
	URL, Open, Keep string
}

// slipRow is one line of the instructions: Number marks what the shopper
// types or tells (a payment number, an account number), shown larger;
// Sub is a code beside a name.
type slipRow struct {
	Label, Value, Sub string
	Number            bool
}

// slipOf is the instructions of an awaiting konbini payment or bank
// transfer, from its issuer token, in l's language; nil for any other.
func slipOf(it *payment.IssuerToken, l message.Locale) *slipView {
	if it == nil || it.PaymentType != payment.PaymentTypeKonbini && it.PaymentType != payment.PaymentTypeBankTransfer {
		return nil
	}
	t := message.CheckoutSlip.In(l)
	p := it.Payload
	amount := p["amount"]
	if n, err := strconv.ParseInt(p["amount"], 10, 64); err == nil {
		amount = site.Amount(n, p["currency"])
	}
	v := &slipView{Open: t["open"], Keep: t["keep"]}
	if strings.HasPrefix(it.IssuerToken, "https://") || strings.HasPrefix(it.IssuerToken, "http://") {
		v.URL = it.IssuerToken
	}
	add := func(label, value, sub string, number bool) {
		v.Rows = append(v.Rows, slipRow{Label: t[label], Value: value, Sub: sub, Number: number})
	}
	code := func(c string) string {
		if c == "" {
			return ""
		}
		return strings.Replace(t["code"], "%s", c, 1)
	}
	if it.PaymentType == payment.PaymentTypeKonbini {
		store := t["store_"+p["convenience_store"]]
		if store == "" {
			store = p["convenience_store"]
		}
		number := "payment_number"
		v.Title, v.Text = strings.Replace(t["konbini_title"], "%s", store, 1), t["konbini_text"]
		if p["convenience_store"] == "pay_easy" {
			v.Title, v.Text, number = t["pay_easy_title"], t["pay_easy_text"], "customer_number"
		}
		add("store", store, "", false)
		add(number, p["payment_number"], "", true)
		if p["confirmation_number"] != "" {
			add("confirmation", p["confirmation_number"], "", true)
		}
		add("amount", amount, "", false)
	} else {
		v.Title, v.Text = strings.Replace(t["bank_title"], "%s", amount, 1), t["bank_text"]
		accountType := p["account_type"]
		if accountType == "ordinary" {
			accountType = t["ordinary"]
		}
		add("bank", p["bank_name"], code(p["bank_code"]), false)
		add("branch", p["branch_name"], code(p["branch_code"]), false)
		add("account_type", accountType, "", false)
		add("account_number", p["account_number"], "", true)
		add("holder", p["account_holder_name"], "", false)
		add("amount", amount, "", false)
	}
	deadline := p["expiration_date"]
	if at, err := time.Parse(time.RFC3339, deadline); err == nil {
		deadline = formatDeadline(at, l)
	}
	add("deadline", deadline, "", false)
	return v
}

// japan is Japan's time, which keeps no summer time: the stores' and the
// banks' deadlines are written in it.
var japan = time.FixedZone("JST", 9*60*60)

// formatDeadline writes a payment deadline as a date and time in Japan,
// in l's language (message.CheckoutSlip's deadline_format; static/widget.js's
// deadlineText writes it the same way).
func formatDeadline(at time.Time, l message.Locale) string {
	t := message.CheckoutSlip.In(l)
	j := at.In(japan)
	weekdays, months := strings.Fields(t["weekdays"]), strings.Fields(t["months"])
	return strings.NewReplacer(
		"{weekday}", weekdays[j.Weekday()], "{day}", strconv.Itoa(j.Day()), "{month}", months[j.Month()-1],
		"{year}", strconv.Itoa(j.Year()), "{time}", j.Format("15:04"),
	).Replace(t["deadline_format"])
}
