package checkout

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/message"
	"github.com/kessai/kessai/web/site"
)

// A subscription checkout: checkout "payment" with tokenType
// "subscription" makes a subscription token and, on it, a subscription
// (POST /subscriptions) instead of a charge. Its terms are the widget's
// options of UnivaPay's names, the same in the frame's query (which the
// loader fills from the options and the HTML mode's data-* attributes) and
// in the hosted link form's:
//
//	subscriptionPeriod          daily, weekly, biweekly, monthly, bimonthly,
//	                            quarterly, semiannually or annually
//	subscriptionCyclicalPeriod  instead of a period, an ISO 8601 duration
//	                            of whole days or more (P10D, P2W, P1Y6M)
//	subscriptionInitialAmount   the first payment's amount, charged now
//	                            (0: a free first period); the amount is
//	                            then due one period later
//	subscriptionStart           the first recurring payment's day
//	                            (YYYY-MM-DD, today or later)
//	subscriptionZoneId          the zone of the due dates (IANA name;
//	                            Asia/Tokyo when not given)
//	subscriptionPlan            fixed_cycles: the subscription ends after
//	subscriptionQty             this many payments (2 to 1200)
//
// Everything is checked here as the API would check it, so that a bad
// link or option shows a clear error at once instead of a form that
// fails when the shopper pays.

// The subscription parameters' names.
const (
	paramSubPeriod   = "subscriptionPeriod"
	paramSubCyclical = "subscriptionCyclicalPeriod"
	paramSubInitial  = "subscriptionInitialAmount"
	paramSubStart    = "subscriptionStart"
	paramSubZone     = "subscriptionZoneId"
	paramSubPlan     = "subscriptionPlan"
	paramSubQty      = "subscriptionQty"
)

var subscriptionParams = []string{paramSubPeriod, paramSubCyclical, paramSubInitial, paramSubStart, paramSubZone, paramSubPlan, paramSubQty}

// Bounds of the terms.
const (
	maxSubParam      = 64
	minSubCycles     = 2
	maxSubCycles     = 1200
	planFixedCycles  = "fixed_cycles"
	defaultSubZoneID = "Asia/Tokyo"
)

// subscriptionTerms are a subscription checkout's terms, checked. The
// JSON names are short: the link form keeps them in its session cookie.
type subscriptionTerms struct {
	Period         string `json:"pe,omitempty"`
	CyclicalPeriod string `json:"cp,omitempty"`
	// InitialAmount is the first payment's amount, nil when it is the
	// amount.
	InitialAmount *int64 `json:"ia,omitempty"`
	// StartOn is the first recurring payment's day, YYYY-MM-DD, "" for
	// the default.
	StartOn string `json:"so,omitempty"`
	ZoneID  string `json:"z,omitempty"`
	// Cycles is the number of payments of a fixed_cycles plan, 0 for a
	// subscription without an end.
	Cycles int `json:"q,omitempty"`
}

// hasSubscriptionParams reports whether q has any subscription parameter.
func hasSubscriptionParams(q url.Values) bool {
	for _, p := range subscriptionParams {
		if strings.TrimSpace(q.Get(p)) != "" {
			return true
		}
	}
	return false
}

// parseSubscription reads the subscription terms of q for an amount in
// cur, as of now. It returns the keys (message.LinkForm's p_sub_*) of
// what is wrong, each once.
func parseSubscription(q url.Values, cur payment.Currency, now time.Time) (*subscriptionTerms, []string) {
	st := &subscriptionTerms{}
	var problems []string
	bad := func(key string) {
		for _, p := range problems {
			if p == key {
				return
			}
		}
		problems = append(problems, key)
	}
	get := func(name string) string {
		v := strings.TrimSpace(q.Get(name))
		if len(v) > maxSubParam {
			return "\x00" // too long to be anything valid
		}
		return v
	}

	period, cyclical := strings.ToLower(get(paramSubPeriod)), strings.ToUpper(get(paramSubCyclical))
	switch {
	case period != "" && cyclical != "", period == "" && cyclical == "":
		bad("p_sub_period")
	case period != "":
		if _, ok := payment.PeriodCycle(period); !ok {
			bad("p_sub_period")
		}
		st.Period = period
	default:
		if _, ok := payment.ParseCycle(cyclical); !ok {
			bad("p_sub_period")
		}
		st.CyclicalPeriod = cyclical
	}

	if s := get(paramSubInitial); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil || n < 0 || n > cur.MaxAmount, n > 0 && n < cur.MinAmount:
			bad("p_sub_initial")
		default:
			st.InitialAmount = &n
		}
	}

	zone := defaultSubZoneID
	if z := get(paramSubZone); z != "" {
		if subscriptionZone(z) == nil {
			bad("p_sub_zone")
		} else {
			st.ZoneID, zone = z, z
		}
	}
	if s := get(paramSubStart); s != "" {
		d, ok := payment.ParseDate(s)
		loc := subscriptionZone(zone)
		switch {
		case !ok:
			bad("p_sub_start")
		case loc != nil && d.Before(payment.DateOf(now, loc)):
			bad("p_sub_start")
		default:
			st.StartOn = d.String()
		}
	}

	plan, qty := strings.ToLower(get(paramSubPlan)), get(paramSubQty)
	switch {
	case plan == "" && qty == "":
	case plan != "" && plan != planFixedCycles:
		bad("p_sub_plan")
	default:
		n, err := strconv.Atoi(qty)
		if err != nil || n < minSubCycles || n > maxSubCycles {
			bad("p_sub_plan")
		} else {
			st.Cycles = n
		}
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return st, nil
}

// subscriptionZone loads an IANA zone by name, as the API does: nil for a
// name that is none ("Local" is this machine's, not a zone a shop can
// mean).
func subscriptionZone(name string) *time.Location {
	if name == "" || len(name) > maxSubParam || name == "Local" || strings.ContainsAny(name, "\\\x00 ") {
		return nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil
	}
	return loc
}

// periodText writes an amount due every period of the terms, in l's
// language: "¥980 / month".
func (st *subscriptionTerms) periodText(l message.Locale, amount string) string {
	if st.Period != "" {
		return fmt.Sprintf(message.Periods.Get(st.Period, l), amount)
	}
	c, ok := payment.ParseCycle(st.CyclicalPeriod)
	switch {
	case !ok:
	case c.Months == 0 && c.Days%7 == 0:
		return countedPeriod(l, amount, c.Days/7, "weekly", "every_weeks")
	case c.Months == 0:
		return countedPeriod(l, amount, c.Days, "daily", "every_days")
	case c.Days == 0 && c.Months%12 == 0:
		return countedPeriod(l, amount, c.Months/12, "annually", "every_years")
	case c.Days == 0:
		return countedPeriod(l, amount, c.Months, "monthly", "every_months")
	}
	return fmt.Sprintf(message.Periods.Get("every_other", l), amount, st.CyclicalPeriod)
}

func countedPeriod(l message.Locale, amount string, n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf(message.Periods.Get(one, l), amount)
	}
	return fmt.Sprintf(message.Periods.Get(many, l), amount, n)
}

// amountText writes what the shopper agrees to pay: the amount every
// period, and a first payment of another amount, a later start and a
// fixed number of payments when the terms have them.
func (st *subscriptionTerms) amountText(l message.Locale, amount int64, currency string) string {
	s := st.periodText(l, site.Amount(amount, currency))
	if st.StartOn != "" {
		s = fmt.Sprintf(message.Periods.Get("start", l), s, st.StartOn)
	}
	if st.InitialAmount != nil {
		s = fmt.Sprintf(message.Periods.Get("initial", l), site.Amount(*st.InitialAmount, currency), s)
	}
	if st.Cycles > 0 {
		s = fmt.Sprintf(message.Periods.Get("cycles", l), s, st.Cycles)
	}
	return s
}

// config is the terms as the frame's script sends them to POST
// /subscriptions.
func (st *subscriptionTerms) config() map[string]any {
	m := map[string]any{}
	if st.Period != "" {
		m["period"] = st.Period
	}
	if st.CyclicalPeriod != "" {
		m["cyclical_period"] = st.CyclicalPeriod
	}
	if st.InitialAmount != nil {
		m["initial_amount"] = *st.InitialAmount
	}
	sch := map[string]any{}
	if st.StartOn != "" {
		sch["start_on"] = st.StartOn
	}
	if st.ZoneID != "" {
		sch["zone_id"] = st.ZoneID
	}
	if len(sch) > 0 {
		m["schedule_settings"] = sch
	}
	if st.Cycles > 0 {
		m["subscription_plan"] = map[string]any{"plan_type": planFixedCycles, "fixed_cycles": st.Cycles}
	}
	return m
}

// query writes the terms as the frame's and the link form's parameters.
func (st *subscriptionTerms) query(q url.Values) {
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set(paramSubPeriod, st.Period)
	set(paramSubCyclical, st.CyclicalPeriod)
	if st.InitialAmount != nil {
		q.Set(paramSubInitial, strconv.FormatInt(*st.InitialAmount, 10))
	}
	set(paramSubStart, st.StartOn)
	set(paramSubZone, st.ZoneID)
	if st.Cycles > 0 {
		q.Set(paramSubPlan, planFixedCycles)
		q.Set(paramSubQty, strconv.Itoa(st.Cycles))
	}
}

// matches reports whether sub is a subscription on these terms of amount
// in currency.
func (st *subscriptionTerms) matches(sub *payment.Subscription, amount int64, currency string) bool {
	if sub.Amount != amount || !strings.EqualFold(sub.Currency, currency) ||
		sub.Period != st.Period || sub.CyclicalPeriod != st.CyclicalPeriod {
		return false
	}
	if (sub.InitialAmount == nil) != (st.InitialAmount == nil) ||
		sub.InitialAmount != nil && *sub.InitialAmount != *st.InitialAmount {
		return false
	}
	if st.StartOn != "" && (sub.Schedule.StartOn == nil || sub.Schedule.StartOn.String() != st.StartOn) {
		return false
	}
	if st.Cycles > 0 && (sub.Plan == nil || sub.Plan.PlanType != payment.PlanFixedCycles || sub.Plan.FixedCycles != st.Cycles) {
		return false
	}
	return st.Cycles > 0 || sub.Plan == nil
}
