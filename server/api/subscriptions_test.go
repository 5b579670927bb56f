package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// Handler tests of the subscription routes (UnivaPay's subscription
// endpoints and shape) through the real router over a real SQLite file, with the
// payments fixture (clock at 2026-03-02 19:00 in Tokyo). Processing is
// driven by hand (process), or by the real worker where a long poll is
// under test.

// ---- PHP's parsers of subscriptions and their payments (phpsdk_test.go)

var (
	phpSubscriptionStatus = []string{"unverified", "unconfirmed", "unpaid", "authorized", "current", "suspended", "canceled", "completed"}
	// Enums/Period.php has no bimonthly.
	phpPeriod   = []string{"daily", "weekly", "biweekly", "monthly", "quarterly", "semiannually", "annually"}
	phpPlanType = []string{"null", "fixed_cycles", "fixed_cycle_amount"}
)

func init() {
	// Resources/Subscription.php initSchema; its nested parsers
	// (ScheduleSettings, ScheduledPayment, SubscriptionPlan, PaymentThreeDS)
	// read the objects.
	phpSchemas["subscription"] = phpSchema{
		required: []string{"currency", "amount", "schedule_settings", "schedule_settings.zone_id", "status", "mode", "created_on"},
		enums: map[string][]string{"status": phpSubscriptionStatus, "mode": phpMode, "period": phpPeriod,
			"subscription_plan.plan_type": phpPlanType, "three_ds.mode": phpThreeDSMode},
		money:    []string{"amount", "initial_amount", "amount_left", "subscription_plan.fixed_cycle_amount", "next_payment.amount"},
		currency: []string{"currency", "next_payment.currency"},
		times:    []string{"created_on", "next_payment.created_on"},
		objects:  []string{"schedule_settings", "next_payment", "subscription_plan", "installment_plan", "three_ds"},
	}
	// Subscription/ScheduledPayment.php: its constructor reads zone_id
	// (new DateTimeZone), due_date, currency and amount (new Money).
	phpSchemas["scheduled_payment"] = phpSchema{
		required: []string{"due_date", "zone_id", "currency", "amount"},
		money:    []string{"amount"},
		currency: []string{"currency"},
		times:    []string{"created_on"},
	}
}

// isoDurationPHP is what PHP's DateInterval constructor reads.
var isoDurationPHP = regexp.MustCompile(`^P(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?$`)

var wireDate = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// checkPHPSubscription checks a subscription as PHP's parser reads it,
// and what its nested constructors need beyond the schema.
func checkPHPSubscription(t *testing.T, what string, m map[string]any) {
	t.Helper()
	checkPHPSchema(t, what, m, "subscription")
	for _, p := range []string{"cyclical_period", "first_charge_capture_after", "schedule_settings.retry_interval", "next_payment.retry_interval"} {
		if v := jget(m, p); v != nil {
			if s, isString := v.(string); !isString || s == "P" || strings.HasSuffix(s, "T") || !isoDurationPHP.MatchString(s) {
				t.Errorf("%s: %s = %v, want null or an ISO-8601 duration", what, p, v)
			}
		}
	}
	if v := jget(m, "schedule_settings.start_on"); v != nil && !wireDate.MatchString(fmt.Sprint(v)) {
		t.Errorf("%s: start_on = %v, want null or YYYY-MM-DD", what, v)
	}
	if np, isObject := jget(m, "next_payment").(map[string]any); isObject {
		checkPHPSchema(t, what+" next_payment", np, "scheduled_payment")
		if !wireDate.MatchString(jstr(np, "due_date")) {
			t.Errorf("%s: next_payment.due_date = %v", what, np["due_date"])
		}
	}
	if plan, isObject := jget(m, "subscription_plan").(map[string]any); isObject {
		// SubscriptionPlan's constructor refuses the other type's field.
		cycles, amount := plan["fixed_cycles"] != nil, plan["fixed_cycle_amount"] != nil
		if typ := jstr(plan, "plan_type"); (typ == "fixed_cycles") != cycles || (typ == "fixed_cycle_amount") != amount {
			t.Errorf("%s: subscription_plan %v", what, plan)
		}
	}
	if jstr(m, "period") == "" && jstr(m, "cyclical_period") == "" {
		t.Errorf("%s: neither period nor cyclical_period: %v, %v", what, m["period"], m["cyclical_period"])
	}
}

// subscriptionKeys are the fields of a subscription on the wire.
var subscriptionKeys = []string{
	"amount", "amount_formatted", "amount_left", "amount_left_formatted", "charge_id", "created_on", "currency",
	"cycles_left", "cyclical_period", "descriptor", "first_charge_authorization_only", "first_charge_capture_after",
	"id", "initial_amount", "initial_amount_formatted", "installment_plan", "merchant_id", "metadata", "mode",
	"next_payment", "only_direct_currency", "payments_left", "period", "platform_id", "schedule_settings", "status",
	"store_id", "subscription_plan", "subsequent_cycles_start", "three_ds", "transaction_token_id", "updated_on",
}

var scheduledPaymentKeys = []string{
	"amount", "amount_formatted", "created_on", "currency", "due_date", "id", "is_last_payment", "is_paid",
	"retry_date", "retry_interval", "successful_payment_date", "terminate_with_status", "updated_on", "zone_id",
}

// ---- flows

func subBody(tokenID string, kv ...any) map[string]any {
	return with(map[string]any{"transaction_token_id": tokenID, "amount": 1000, "currency": "JPY", "period": "monthly"}, kv...)
}

func (f *payFixture) subPath(id string) string { return storePath(f.storeA1, "/subscriptions/"+id) }

// subToken is a subscription token of store A1.
func (f *payFixture) subToken(t testing.TB) string {
	t.Helper()
	return f.token(t, "4000020000000000", "type", "subscription")
}

// createSub makes a subscription of store A1 on a new token.
func (f *payFixture) createSub(t testing.TB, kv ...any) map[string]any {
	t.Helper()
	return ok(t, f.do(t, "POST", "/subscriptions", server(f.a1), subBody(f.subToken(t), kv...)), http.StatusCreated)
}

func (f *payFixture) getSub(t testing.TB, id string) map[string]any {
	t.Helper()
	return ok(t, f.do(t, "GET", f.subPath(id), server(f.a1), nil), http.StatusOK)
}

// currentSub makes a subscription and charges its first payment.
func (f *payFixture) currentSub(t testing.TB, kv ...any) string {
	t.Helper()
	id := jstr(f.createSub(t, kv...), "id")
	f.process(t)
	if st := jstr(f.getSub(t, id), "status"); st != "current" {
		t.Fatalf("subscription %s after its first charge, want current", st)
	}
	return id
}

// wantNoContent checks a 204 without a body (Node resolves it to "").
func wantNoContent(t testing.TB, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("%d %q, want 204 and no body", rec.Code, rec.Body)
	}
}

func wantStatus(t testing.TB, m map[string]any, want string) {
	t.Helper()
	if got := jstr(m, "status"); got != want {
		t.Errorf("status %q, want %q", got, want)
	}
}

// ---------------------------------------------------------------------------

// TestSubscriptionLifecycle is a subscription's whole life over HTTP:
// create, poll to current, the first charge, the payments, suspend,
// unsuspend, PATCH, DELETE, canceled; every answer as PHP parses it.
func TestSubscriptionLifecycle(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	tok := f.subToken(t)

	// PHP sends amounts as strings.
	created := ok(t, f.do(t, "POST", "/subscriptions", a1, subBody(tok, "amount", "1000", "metadata", map[string]any{"order": "A-1"})), http.StatusCreated)
	id := jstr(created, "id")
	checkPHPSubscription(t, "POST /subscriptions", created)
	if got := keysOf(created); !slices.Equal(got, subscriptionKeys) {
		t.Errorf("keys %v, want %v", got, subscriptionKeys)
	}
	wantStatus(t, created, "unverified")
	for path, want := range map[string]any{
		"amount": 1000.0, "amount_formatted": 1000.0, "currency": "JPY", "period": "monthly", "mode": "test",
		"store_id": f.storeA1.String(), "merchant_id": f.merchantA.String(), "transaction_token_id": tok,
		"schedule_settings.zone_id": "Asia/Tokyo", "schedule_settings.termination_mode": "immediate",
		"schedule_settings.preserve_end_of_month": false, "metadata.order": "A-1",
		"next_payment.due_date": "2026-03-02", "next_payment.amount": 1000.0, "next_payment.is_paid": false,
		"next_payment.zone_id": "Asia/Tokyo", "first_charge_authorization_only": false, "only_direct_currency": false,
	} {
		if got := jget(created, path); got != want {
			t.Errorf("created %s = %v, want %v", path, got, want)
		}
	}
	for _, p := range []string{"cyclical_period", "initial_amount", "initial_amount_formatted", "schedule_settings.start_on",
		"schedule_settings.retry_interval", "cycles_left", "payments_left", "amount_left", "amount_left_formatted",
		"subscription_plan", "installment_plan", "platform_id", "descriptor", "charge_id", "subsequent_cycles_start",
		"first_charge_capture_after", "next_payment.retry_date", "next_payment.terminate_with_status", "three_ds.mode"} {
		if !jhasNull(created, p) {
			t.Errorf("created %s = %v, want null", p, jget(created, p))
		}
	}

	f.process(t)
	got := ok(t, f.do(t, "GET", f.subPath(id)+"?polling=true", a1, nil), http.StatusOK)
	checkPHPSubscription(t, "GET subscription", got)
	wantStatus(t, got, "current")
	if jstr(got, "next_payment.due_date") != "2026-04-02" || jget(got, "next_payment.is_paid") != false {
		t.Errorf("next_payment after the first charge: %v", got["next_payment"])
	}

	// The first charge, as the charges list shows it.
	charges := ok(t, f.do(t, "GET", f.subPath(id)+"/charges", a1, nil), http.StatusOK)
	checkPHPList(t, "subscription charges", charges, "charge", 1)
	items := charges["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("charges %v, want one", charges)
	}
	first := items[0].(map[string]any)
	if jstr(first, "subscription_id") != id || jstr(first, "transaction_token_type") != "subscription" ||
		jstr(first, "status") != "successful" || jnum(first, "requested_amount") != 1000 || jstr(first, "metadata.order") != "A-1" {
		t.Errorf("first charge %v", first)
	}
	if !slices.Equal(keysOf(first), keysOf(f.getCharge(t, jstr(first, "id")))) {
		t.Errorf("a subscription's charge has keys %v, GET /charges/{id} %v", keysOf(first), keysOf(f.getCharge(t, jstr(first, "id"))))
	}
	latest := ok(t, f.do(t, "GET", f.subPath(id)+"/charges/latest", a1, nil), http.StatusOK)
	checkPHPSchema(t, "charges/latest", latest, "charge")
	if jstr(latest, "id") != jstr(first, "id") {
		t.Errorf("latest charge %s, want %s", jstr(latest, "id"), jstr(first, "id"))
	}

	// The payments: the first, paid, and the next.
	pays := ok(t, f.do(t, "GET", f.subPath(id)+"/payments?cursor_direction=asc", a1, nil), http.StatusOK)
	checkPHPList(t, "payments", pays, "scheduled_payment", 2)
	pitems := pays["items"].([]any)
	if len(pitems) != 2 {
		t.Fatalf("payments %v, want two", pays)
	}
	paid, next := pitems[0].(map[string]any), pitems[1].(map[string]any)
	if got := keysOf(paid); !slices.Equal(got, scheduledPaymentKeys) {
		t.Errorf("payment keys %v, want %v", got, scheduledPaymentKeys)
	}
	if jget(paid, "is_paid") != true || jstr(paid, "successful_payment_date") != "2026-03-02" || jstr(paid, "due_date") != "2026-03-02" ||
		jstr(next, "id") != jstr(got, "next_payment.id") || jget(next, "is_paid") != false || !jhasNull(next, "successful_payment_date") {
		t.Errorf("payments %v, %v", paid, next)
	}
	one := ok(t, f.do(t, "GET", f.subPath(id)+"/payments/"+jstr(paid, "id"), a1, nil), http.StatusOK)
	if !sameJSON(one, paid) {
		t.Errorf("GET payment %v, list item %v", one, paid)
	}
	pc := ok(t, f.do(t, "GET", f.subPath(id)+"/payments/"+jstr(paid, "id")+"/charges", a1, nil), http.StatusOK)
	if ids := listIDs(t, pc); !slices.Equal(ids, []string{jstr(first, "id")}) {
		t.Errorf("the first payment's charges %v, want the first charge", ids)
	}
	if ids := listIDs(t, ok(t, f.do(t, "GET", f.subPath(id)+"/payments/"+jstr(next, "id")+"/charges", a1, nil), http.StatusOK)); len(ids) != 0 {
		t.Errorf("the next payment's charges %v, want none", ids)
	}

	// Suspend without the store (the token's), unsuspend with it.
	sus := ok(t, f.do(t, "PATCH", "/subscriptions/"+id+"/suspend", a1, map[string]any{}), http.StatusOK)
	checkPHPSubscription(t, "suspend", sus)
	wantStatus(t, sus, "suspended")
	wantStatus(t, f.getSub(t, id), "suspended")
	uns := ok(t, f.do(t, "PATCH", f.subPath(id)+"/unsuspend", a1, nil), http.StatusOK)
	checkPHPSubscription(t, "unsuspend", uns)
	wantStatus(t, uns, "current")

	f.clock.Advance(time.Minute)
	upd := ok(t, f.do(t, "PATCH", f.subPath(id), a1, map[string]any{"amount": "2000", "descriptor": "SHOP", "metadata": map[string]any{"plan": "gold"}}), http.StatusOK)
	checkPHPSubscription(t, "PATCH", upd)
	if jnum(upd, "amount") != 2000 || jnum(upd, "amount_formatted") != 2000 || jstr(upd, "descriptor") != "SHOP" ||
		jstr(upd, "metadata.order") != "A-1" || jstr(upd, "metadata.plan") != "gold" || jstr(upd, "updated_on") == jstr(created, "updated_on") {
		t.Errorf("after PATCH: %v", upd)
	}

	list := ok(t, f.do(t, "GET", "/subscriptions", a1, nil), http.StatusOK)
	checkPHPList(t, "GET /subscriptions", list, "subscription", 1)
	if ids := listIDs(t, list); !slices.Equal(ids, []string{id}) {
		t.Errorf("list %v, want [%s]", ids, id)
	}
	if !sameJSON(list["items"].([]any)[0], f.getSub(t, id)) {
		t.Errorf("list item %v, GET %v", list["items"].([]any)[0], f.getSub(t, id))
	}

	rec := f.do(t, "DELETE", f.subPath(id), a1, nil)
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("DELETE: %d %q, want 204 and no body", rec.Code, rec.Body)
	}
	gone := f.getSub(t, id)
	checkPHPSubscription(t, "GET canceled", gone)
	wantStatus(t, gone, "canceled")
	if !jhasNull(gone, "next_payment") {
		t.Errorf("a canceled subscription's next_payment %v, want null", gone["next_payment"])
	}
	wantError(t, f.do(t, "DELETE", f.subPath(id), a1, nil), http.StatusBadRequest, payment.CodeCannotChangeCanceled)
}

// TestSubscriptionLongPoll: ?polling=true holds the read of an unverified
// subscription; without it, or once it is current, the answer is at once.
func TestSubscriptionLongPoll(t *testing.T) {
	const wait = 300 * time.Millisecond
	f := newPayFixture(t, payOptions{pollWait: wait})
	id := jstr(f.createSub(t), "id")
	timed := func(path string) (map[string]any, time.Duration) {
		start := time.Now()
		m := ok(t, f.do(t, "GET", path, server(f.a1), nil), http.StatusOK)
		return m, time.Since(start)
	}
	m, took := timed(f.subPath(id))
	if wantStatus(t, m, "unverified"); took >= wait {
		t.Errorf("a read without polling took %v", took)
	}
	m, took = timed(f.subPath(id) + "?polling=true")
	if wantStatus(t, m, "unverified"); took < wait-20*time.Millisecond || took > wait+2*time.Second {
		t.Errorf("long poll answered after %v, want about %v", took, wait)
	}
	f.process(t)
	m, took = timed(f.subPath(id) + "?polling=true")
	if wantStatus(t, m, "current"); took >= wait {
		t.Errorf("a poll of a current subscription took %v", took)
	}
}

func TestSubscriptionCreateErrors(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	tok := f.subToken(t)
	big := strings.Repeat("x", 512<<10)
	for _, c := range []struct {
		name   string
		body   any
		status int
		code   payment.Code
		field  string
	}{
		{"unknown period", subBody(tok, "period", "fortnightly"), 400, payment.CodeValidation, "period"},
		{"no period", subBody(tok, "period", nil), 400, payment.CodeValidation, "period"},
		{"both periods", subBody(tok, "cyclical_period", "P1M"), 400, payment.CodeValidation, "cyclical_period"},
		{"cyclical P0D", subBody(tok, "period", nil, "cyclical_period", "P0D"), 400, payment.CodeValidation, "cyclical_period"},
		{"cyclical P1H", subBody(tok, "period", nil, "cyclical_period", "P1H"), 400, payment.CodeValidation, "cyclical_period"},
		{"cyclical PXYZ", subBody(tok, "period", nil, "cyclical_period", "PXYZ"), 400, payment.CodeValidation, "cyclical_period"},
		{"zone on Mars", subBody(tok, "schedule_settings", map[string]any{"zone_id": "Mars/Olympus"}), 400, payment.CodeValidation, "schedule_settings.zone_id"},
		{"start_on yesterday", subBody(tok, "schedule_settings", map[string]any{"start_on": "2026-03-01"}), 400, payment.CodeValidation, "schedule_settings.start_on"},
		{"start_on not a date", subBody(tok, "schedule_settings", map[string]any{"start_on": "2026-3-10"}), 400, payment.CodeValidation, "schedule_settings.start_on"},
		{"start_on a time", subBody(tok, "schedule_settings", map[string]any{"start_on": "2026-04-01T00:00:00Z"}), 400, payment.CodeValidation, "schedule_settings.start_on"},
		{"start_on a number", subBody(tok, "schedule_settings", map[string]any{"start_on": 20260401}), 400, payment.CodeValidation, "schedule_settings.start_on"},
		{"start_on Feb 30", subBody(tok, "schedule_settings", map[string]any{"start_on": "2026-02-30"}), 400, payment.CodeValidation, "schedule_settings.start_on"},
		{"termination mode", subBody(tok, "schedule_settings", map[string]any{"termination_mode": "later"}), 400, payment.CodeValidation, "schedule_settings.termination_mode"},
		{"retry interval", subBody(tok, "schedule_settings", map[string]any{"retry_interval": "P1Y"}), 400, payment.CodeValidation, "schedule_settings.retry_interval"},
		{"preserve_end_of_month a string", subBody(tok, "schedule_settings", map[string]any{"preserve_end_of_month": "yes"}), 400, payment.CodeValidation, "schedule_settings.preserve_end_of_month"},
		{"one cycle", subBody(tok, "subscription_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 1}), 400, payment.CodeValidation, "subscription_plan.fixed_cycles"},
		{"100000 cycles", subBody(tok, "subscription_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 100000}), 400, payment.CodeValidation, "subscription_plan.fixed_cycles"},
		{"cycles beyond int64", subBody(tok, "subscription_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": json.Number("99999999999999999999")}), 400, payment.CodeValidation, "subscription_plan.fixed_cycles"},
		{"plan type", subBody(tok, "subscription_plan", map[string]any{"plan_type": "revolving"}), 400, payment.CodeValidation, "subscription_plan.plan_type"},
		{"plan amount too small", subBody(tok, "subscription_plan", map[string]any{"plan_type": "fixed_cycle_amount", "fixed_cycle_amount": "1000"}), 400, payment.CodeValidation, "subscription_plan.fixed_cycle_amount"},
		{"installments", subBody(tok, "installment_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 3}), 403, payment.CodeInstallmentsNotEnabled, ""},
		{"amount at int64's end", subBody(tok, "amount", json.Number("9223372036854775807")), 400, payment.CodeChargeAmountTooHigh, ""},
		{"amount beyond int64", subBody(tok, "amount", json.Number("9223372036854775808")), 400, payment.CodeValidation, "amount"},
		{"amount not a number", subBody(tok, "amount", "1,000"), 400, payment.CodeValidation, "amount"},
		{"initial amount negative", subBody(tok, "initial_amount", "-1"), 400, payment.CodeValidation, "initial_amount"},
		{"initial amount a float", subBody(tok, "initial_amount", 10.5), 400, payment.CodeValidation, "initial_amount"},
		{"token not a uuid", subBody("tok_1"), 400, payment.CodeValidation, "transaction_token_id"},
		{"no token", subBody(""), 400, payment.CodeValidation, "transaction_token_id"},
		{"unknown token", subBody(payment.NewID().String()), 404, payment.CodeNotFound, ""},
		{"one-time token", subBody(f.token(t, "4000020000000000")), 400, payment.CodeNotSubscriptionToken, ""},
		{"recurring token", subBody(f.token(t, "4000020000000000", "type", "recurring")), 400, payment.CodeNotSubscriptionToken, ""},
		{"metadata a number", subBody(tok, "metadata", 5), 400, payment.CodeValidation, "metadata"},
		{"three_ds mode", subBody(tok, "three_ds", map[string]any{"mode": "sometimes"}), 400, payment.CodeValidation, "three_ds.mode"},
		{"redirect endpoint", subBody(tok, "redirect", map[string]any{"endpoint": "javascript:alert(1)"}), 400, payment.CodeValidation, "redirect.endpoint"},
		{"capture after without authorization only", subBody(tok, "first_charge_capture_after", "P3D"), 400, payment.CodeValidation, "first_charge_capture_after"},
		{"capture after P7D", subBody(tok, "first_charge_authorization_only", true, "first_charge_capture_after", "P7D"), 400, payment.CodeValidation, "first_charge_capture_after"},
		{"capture after P9D", subBody(tok, "first_charge_authorization_only", true, "first_charge_capture_after", "P9D"), 400, payment.CodeValidation, "first_charge_capture_after"},
		{"authorization only a string", subBody(tok, "first_charge_authorization_only", "true"), 400, payment.CodeValidation, "first_charge_authorization_only"},
		{"currency", subBody(tok, "currency", "XXX"), 400, payment.CodeValidation, "currency"},
		{"body not JSON", `{"amount":1000`, 400, payment.CodeValidation, "body"},
		// Strings of half a megabyte name their field; nothing echoes them.
		{"huge period", subBody(tok, "period", big), 400, payment.CodeValidation, "period"},
		{"huge cyclical period", subBody(tok, "period", nil, "cyclical_period", "P"+big), 400, payment.CodeValidation, "cyclical_period"},
		{"huge zone", subBody(tok, "schedule_settings", map[string]any{"zone_id": big}), 400, payment.CodeValidation, "schedule_settings.zone_id"},
		{"huge start_on", subBody(tok, "schedule_settings", map[string]any{"start_on": big}), 400, payment.CodeValidation, "schedule_settings.start_on"},
		{"huge retry interval", subBody(tok, "schedule_settings", map[string]any{"retry_interval": big}), 400, payment.CodeValidation, "schedule_settings.retry_interval"},
		{"huge termination mode", subBody(tok, "schedule_settings", map[string]any{"termination_mode": big}), 400, payment.CodeValidation, "schedule_settings.termination_mode"},
		{"huge plan type", subBody(tok, "subscription_plan", map[string]any{"plan_type": big}), 400, payment.CodeValidation, "subscription_plan.plan_type"},
		{"huge descriptor", subBody(tok, "descriptor", big), 400, payment.CodeValidation, "descriptor"},
		{"huge capture after", subBody(tok, "first_charge_authorization_only", true, "first_charge_capture_after", big), 400, payment.CodeValidation, "first_charge_capture_after"},
		{"huge amount", subBody(tok, "amount", strings.Repeat("9", 512<<10)), 400, payment.CodeValidation, "amount"},
		{"huge token id", subBody(big), 400, payment.CodeValidation, "transaction_token_id"},
		{"huge three_ds endpoint", subBody(tok, "three_ds", map[string]any{"redirect_endpoint": "https://shop.example/" + big}), 400, payment.CodeValidation, "three_ds.redirect_endpoint"},
		{"body over a megabyte", subBody(tok, "descriptor", big+big+big), 413, payment.CodeBodyTooLarge, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := f.do(t, "POST", "/subscriptions", a1, c.body)
			var fields []string
			if c.field != "" {
				fields = append(fields, c.field)
			}
			wantError(t, rec, c.status, c.code, fields...)
			if rec.Body.Len() > 1000 {
				t.Errorf("the refusal is %d bytes long", rec.Body.Len())
			}
		})
	}
	// A start_on that is no day is malformed; a day before today is in
	// the past.
	for _, c := range []struct {
		startOn any
		reason  string
	}{
		{"2026-03-01", "DATE_IN_THE_PAST"}, {"2026-3-10", payment.ReasonInvalidFormat},
		{"2026-02-30", payment.ReasonInvalidFormat}, {20260401, payment.ReasonInvalidFormat}, {"", payment.ReasonInvalidFormat},
	} {
		errs := wantError(t, f.do(t, "POST", "/subscriptions", a1, subBody(tok, "schedule_settings", map[string]any{"start_on": c.startOn})),
			http.StatusBadRequest, payment.CodeValidation, "schedule_settings.start_on")
		if len(errs) != 1 || errs[0].Reason != c.reason {
			t.Errorf("start_on %v: %+v, want %s", c.startOn, errs, c.reason)
		}
	}
	// Nothing was made, and the token is still unused.
	if ids := listIDs(t, ok(t, f.do(t, "GET", "/subscriptions", a1, nil), http.StatusOK)); len(ids) != 0 {
		t.Errorf("refused requests made subscriptions %v", ids)
	}
	ok(t, f.do(t, "POST", "/subscriptions", a1, subBody(tok)), http.StatusCreated)
	wantError(t, f.do(t, "POST", "/subscriptions", a1, subBody(tok)), http.StatusBadRequest, payment.CodeTransactionAlreadyDone)
}

// TestSubscriptionTerms: what a new subscription's terms look like on the
// wire, amounts sent as strings (PHP) included.
func TestSubscriptionTerms(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	for _, c := range []struct {
		name string
		kv   []any
		want map[string]any
		null []string
	}{
		{"fixed cycle amount as strings", []any{"amount", "1000", "initial_amount", "500",
			"subscription_plan", map[string]any{"plan_type": "fixed_cycle_amount", "fixed_cycle_amount": "3000"}},
			map[string]any{"amount": 1000.0, "initial_amount": 500.0, "initial_amount_formatted": 500.0,
				"subscription_plan.plan_type": "fixed_cycle_amount", "subscription_plan.fixed_cycle_amount": 3000.0,
				"cycles_left": 4.0, "payments_left": 4.0, "amount_left": 3000.0, "amount_left_formatted": 3000.0,
				"next_payment.amount": 500.0, "next_payment.due_date": "2026-03-02"},
			[]string{"subscription_plan.fixed_cycles"}},
		{"fixed cycles", []any{"amount", 1250, "currency", "USD",
			"subscription_plan", map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": "3"}},
			map[string]any{"amount_formatted": 12.5, "currency": "USD", "cycles_left": 3.0, "payments_left": 3.0,
				"amount_left": 3750.0, "amount_left_formatted": 37.5, "subscription_plan.fixed_cycles": 3.0,
				"next_payment.amount_formatted": 12.5, "next_payment.currency": "USD"},
			[]string{"subscription_plan.fixed_cycle_amount", "initial_amount"}},
		{"cyclical period, later start", []any{"period", nil, "cyclical_period", "P2W",
			"schedule_settings", map[string]any{"start_on": "2026-04-15", "zone_id": "Europe/Paris", "retry_interval": "P2D",
				"termination_mode": "on_next_payment", "preserve_end_of_month": true}},
			map[string]any{"status": "current", "cyclical_period": "P2W", "schedule_settings.start_on": "2026-04-15",
				"schedule_settings.zone_id": "Europe/Paris", "schedule_settings.retry_interval": "P2D",
				"schedule_settings.termination_mode": "on_next_payment", "schedule_settings.preserve_end_of_month": true,
				"next_payment.due_date": "2026-04-15", "next_payment.zone_id": "Europe/Paris"},
			[]string{"period", "cycles_left", "amount_left"}},
		{"authorization only, 3-D Secure", []any{"first_charge_authorization_only", true, "first_charge_capture_after", "P3D",
			"three_ds", map[string]any{"mode": "normal", "redirect_endpoint": "https://shop.example/back", "redirect_id": "r-1"},
			"only_direct_currency", true, "descriptor", "GOLD PLAN"},
			map[string]any{"first_charge_authorization_only": true, "first_charge_capture_after": "P3D",
				"three_ds.mode": "normal", "three_ds.redirect_endpoint": "https://shop.example/back", "three_ds.redirect_id": "r-1",
				"only_direct_currency": true, "descriptor": "GOLD PLAN"},
			nil},
		{"a free first period", []any{"initial_amount", 0},
			map[string]any{"status": "current", "initial_amount": 0.0, "next_payment.due_date": "2026-04-02", "next_payment.amount": 1000.0},
			nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := f.createSub(t, c.kv...)
			checkPHPSubscription(t, "created", m)
			for p, want := range c.want {
				if got := jget(m, p); got != want {
					t.Errorf("%s = %v, want %v", p, got, want)
				}
			}
			for _, p := range c.null {
				if !jhasNull(m, p) {
					t.Errorf("%s = %v, want null", p, jget(m, p))
				}
			}
			// GET shows what POST answered.
			if got := f.getSub(t, jstr(m, "id")); !sameJSON(got, m) {
				t.Errorf("GET %v\nPOST %v", got, m)
			}
		})
	}
}

func TestSubscriptionLists(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	current := f.currentSub(t)
	canceled := f.currentSub(t)
	wantNoContent(t, f.do(t, "DELETE", f.subPath(canceled), a1, nil))
	f.clock.Advance(time.Second)
	suspended := f.currentSub(t)
	ok(t, f.do(t, "PATCH", "/subscriptions/"+suspended+"/suspend", a1, nil), http.StatusOK)
	other := jstr(ok(t, f.do(t, "POST", "/subscriptions", server(f.a2), subBody(jstr(f.tokenAt(t, server(f.a2),
		with(cardBody("4000020000000000"), "type", "subscription")), "id"))), http.StatusCreated), "id")

	for _, c := range []struct {
		path, auth string
		want       []string
	}{
		{"/subscriptions", a1, []string{current, canceled, suspended}},
		{storePath(f.storeA1, "/subscriptions"), a1, []string{current, canceled, suspended}},
		{"/subscriptions", server(f.merchA), []string{current, canceled, suspended, other}},
		{storePath(f.storeA2, "/subscriptions"), server(f.merchA), []string{other}},
		{"/subscriptions?status=canceled", a1, []string{canceled}},
		{"/subscriptions?statuses[]=canceled&statuses[]=suspended", a1, []string{canceled, suspended}},
		{"/subscriptions?statuses=canceled&statuses=current", a1, []string{canceled, current}},
		{"/subscriptions?statuses=canceled,suspended", a1, []string{canceled, suspended}},
		{"/subscriptions?status=unverified", a1, nil},
		{"/subscriptions?mode=live", a1, nil},
		{"/subscriptions?mode=test", a1, []string{current, canceled, suspended}},
		{"/subscriptions?search=" + current, a1, []string{current}},
		{"/subscriptions", server(f.b1), nil},
		{"/subscriptions", server(f.a1Live), nil},
	} {
		m := ok(t, f.do(t, "GET", c.path, c.auth, nil), http.StatusOK)
		if got := listIDs(t, m); !sameSet(got, c.want) {
			t.Errorf("GET %s: %v, want %v", c.path, got, c.want)
		}
	}
	page := ok(t, f.do(t, "GET", "/subscriptions?limit=2", a1, nil), http.StatusOK)
	if got := listIDs(t, page); !slices.Equal(got, []string{suspended, canceled}) && !slices.Equal(got, []string{suspended, current}) || page["has_more"] != true {
		t.Errorf("first page of 2: %v (has_more %v)", got, page["has_more"])
	}
	for _, c := range []struct{ query, field string }{
		{"status=paused", "status"}, {"statuses[]=paused", "statuses"}, {"statuses=current,paused", "statuses"},
		{"mode=demo", "mode"}, {"limit=0", "limit"}, {"cursor=x", "cursor"}, {"cursor_direction=up", "cursor_direction"},
	} {
		wantError(t, f.do(t, "GET", "/subscriptions?"+c.query, a1, nil), http.StatusBadRequest, payment.CodeValidation, c.field)
	}
}

// TestSubscriptionTenancy: another merchant's, another store's and the
// other mode's subscriptions are not found; a browser token reads only
// one it made moments ago, and changes none.
func TestSubscriptionTenancy(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	id := f.currentSub(t)
	pay := jstr(f.getSub(t, id), "next_payment.id")
	paths := func(store string) []struct{ method, path string } {
		base := "/stores/" + store + "/subscriptions/" + id
		return []struct{ method, path string }{
			{"GET", base}, {"PATCH", base}, {"DELETE", base}, {"GET", base + "/charges"}, {"GET", base + "/charges/latest"},
			{"GET", base + "/payments"}, {"GET", base + "/payments/" + pay}, {"PATCH", base + "/payments/" + pay},
			{"GET", base + "/payments/" + pay + "/charges"}, {"PATCH", base + "/suspend"}, {"PATCH", base + "/unsuspend"},
			{"PATCH", base + "/token"}, {"PATCH", "/subscriptions/" + id + "/suspend"}, {"PATCH", "/subscriptions/" + id + "/unsuspend"},
			{"PATCH", "/subscriptions/" + id + "/token"},
		}
	}
	for _, c := range []struct {
		name, auth, store string
	}{
		{"another merchant", server(f.b1), f.storeB1.String()},
		{"another merchant, the owner's store", server(f.b1), f.storeA1.String()},
		{"another store", server(f.a2), f.storeA2.String()},
		{"another store, the owner's store", server(f.a2), f.storeA1.String()},
		{"the other mode", server(f.a1Live), f.storeA1.String()},
		{"the right token, another store", server(f.a1), f.storeA2.String()},
	} {
		for _, p := range paths(c.store) {
			if c.name == "the right token, another store" && strings.HasPrefix(p.path, "/subscriptions/") {
				continue
			}
			rec := f.do(t, p.method, p.path, c.auth, map[string]any{"transaction_token_id": payment.NewID().String()})
			if rec.Code != http.StatusNotFound {
				t.Errorf("%s: %s %s: %d %s, want 404", c.name, p.method, p.path, rec.Code, rec.Body)
			}
		}
	}
	// Unknown ids, ids that are not ids, and a charge's id for a payment's.
	charge := jstr(ok(t, f.do(t, "GET", f.subPath(id)+"/charges/latest", server(f.a1), nil), http.StatusOK), "id")
	for _, p := range []string{f.subPath(payment.NewID().String()), f.subPath("nope"), f.subPath(id) + "/payments/" + payment.NewID().String(),
		f.subPath(id) + "/payments/nope", f.subPath(id) + "/payments/" + charge, f.subPath(charge)} {
		wantError(t, f.do(t, "GET", p, server(f.a1), nil), http.StatusNotFound, payment.CodeNotFound)
	}
	wantStatus(t, f.getSub(t, id), "current")
	// The merchant's own token sees it with the store.
	ok(t, f.do(t, "GET", f.subPath(id), server(f.merchA), nil), http.StatusOK)
}

func TestSubscriptionBrowserToken(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	br, fromShop := browser(f.a1), origin(payShopOrigin)
	tok := jstr(f.tokenAt(t, br, with(cardBody("4000020000000000"), "type", "subscription"), fromShop), "id")
	// The widget: a subscription on the token it just made, then its
	// first charge while the shopper waits.
	created := ok(t, f.do(t, "POST", "/subscriptions", br, subBody(tok), fromShop), http.StatusCreated)
	id := jstr(created, "id")
	f.process(t)
	wantStatus(t, ok(t, f.do(t, "GET", f.subPath(id)+"?polling=true", br, nil, fromShop), http.StatusOK), "current")
	ok(t, f.do(t, "GET", f.subPath(id)+"/charges", br, nil, fromShop), http.StatusOK)
	ok(t, f.do(t, "GET", f.subPath(id)+"/charges/latest", br, nil, fromShop), http.StatusOK)
	pay := jstr(f.getSub(t, id), "next_payment.id")
	// The rest needs the secret.
	for _, p := range []struct{ method, path string }{
		{"GET", "/subscriptions"}, {"GET", storePath(f.storeA1, "/subscriptions")}, {"PATCH", f.subPath(id)},
		{"DELETE", f.subPath(id)}, {"PATCH", f.subPath(id) + "/suspend"}, {"PATCH", "/subscriptions/" + id + "/suspend"},
		{"PATCH", f.subPath(id) + "/unsuspend"}, {"PATCH", f.subPath(id) + "/token"}, {"PATCH", f.subPath(id) + "/payments/" + pay},
	} {
		wantError(t, f.do(t, p.method, p.path, br, map[string]any{"transaction_token_id": tok}, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
	}
	// A few minutes later the subscription is no longer the browser's.
	f.clock.Advance(6 * time.Minute)
	for _, p := range []string{f.subPath(id), f.subPath(id) + "/charges", f.subPath(id) + "/charges/latest"} {
		wantError(t, f.do(t, "GET", p, br, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
	}
	// Nor is one the merchant's server made.
	made := f.currentSub(t)
	wantError(t, f.do(t, "GET", f.subPath(made), br, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
	// A token the server made is not the browser's to subscribe.
	wantError(t, f.do(t, "POST", "/subscriptions", br, subBody(f.subToken(t)), fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
	wantStatus(t, f.getSub(t, id), "current")
}

func TestSimulatePlan(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	simulate := func(t *testing.T, path string, b map[string]any) []map[string]any {
		t.Helper()
		rec := f.do(t, "POST", path, a1, b)
		if rec.Code != http.StatusOK {
			t.Fatalf("simulate_plan: %d %s", rec.Code, rec.Body)
		}
		// A bare array, as PHP's SimpleList::fromResponse maps over it.
		var out []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("simulate_plan answered %s, want a JSON array: %v", rec.Body, err)
		}
		for i, p := range out {
			checkPHPSchema(t, fmt.Sprintf("simulated payment %d", i), p, "scheduled_payment")
			want := []string{"amount", "amount_formatted", "currency", "due_date", "is_last_payment", "is_paid",
				"retry_interval", "successful_payment_date", "terminate_with_status", "zone_id"}
			if got := keysOf(p); !slices.Equal(got, want) {
				t.Errorf("simulated payment keys %v, want %v", got, want)
			}
			if p["is_paid"] != false || !jhasNull(p, "successful_payment_date") || !jhasNull(p, "terminate_with_status") {
				t.Errorf("simulated payment %v", p)
			}
			if p["is_last_payment"] != (i == len(out)-1 && len(out) != 12) {
				t.Errorf("payment %d of %d: is_last_payment %v", i, len(out), p["is_last_payment"])
			}
		}
		return out
	}
	dues := func(ps []map[string]any) []string {
		var out []string
		for _, p := range ps {
			out = append(out, jstr(p, "due_date"))
		}
		return out
	}
	monthEnd := func(preserve bool) map[string]any {
		// What PHP sends: the amount as a string, payment_type, no token.
		return map[string]any{"amount": "1000", "currency": "JPY", "period": "monthly", "payment_type": "card",
			"schedule_settings": map[string]any{"start_on": "2027-01-31", "preserve_end_of_month": preserve, "zone_id": "Asia/Tokyo"},
			"subscription_plan": map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 3}}
	}
	for _, path := range []string{"/subscriptions/simulate_plan", storePath(f.storeA1, "/subscriptions/simulate_plan")} {
		t.Run(path, func(t *testing.T) {
			if got := dues(simulate(t, path, monthEnd(true))); !slices.Equal(got, []string{"2027-01-31", "2027-02-28", "2027-03-31"}) {
				t.Errorf("preserving the month's end: %v", got)
			}
			if got := dues(simulate(t, path, monthEnd(false))); !slices.Equal(got, []string{"2027-01-31", "2027-02-28", "2027-03-28"}) {
				t.Errorf("without preserving the month's end: %v", got)
			}
			unlimited := simulate(t, path, map[string]any{"amount": 1000, "currency": "JPY", "cyclical_period": "P1W",
				"schedule_settings": map[string]any{"retry_interval": "P1D"}})
			if len(unlimited) != 12 || jstr(unlimited[0], "due_date") != "2026-03-02" || jstr(unlimited[11], "due_date") != "2026-05-18" ||
				jstr(unlimited[0], "retry_interval") != "P1D" || jstr(unlimited[0], "zone_id") != "Asia/Tokyo" {
				t.Errorf("unlimited weekly: %d payments, %v … %v", len(unlimited), unlimited[0], unlimited[len(unlimited)-1])
			}
			amounts := simulate(t, path, map[string]any{"amount": 1000, "currency": "JPY", "period": "monthly", "initial_amount": 300,
				"subscription_plan": map[string]any{"plan_type": "fixed_cycle_amount", "fixed_cycle_amount": "2500"}})
			var got []float64
			for _, p := range amounts {
				got = append(got, jnum(p, "amount"))
			}
			if !slices.Equal(got, []float64{300, 1000, 1000, 200}) || jstr(amounts[0], "due_date") != "2026-03-02" || jstr(amounts[1], "due_date") != "2026-04-02" {
				t.Errorf("fixed cycle amount: %v %v", got, dues(amounts))
			}
		})
	}
	wantError(t, f.do(t, "POST", "/subscriptions/simulate_plan", a1, map[string]any{"amount": 1000, "currency": "JPY", "period": "monthly", "payment_type": "konbini"}),
		http.StatusBadRequest, payment.CodeNonSubscriptionPayment)
	wantError(t, f.do(t, "POST", "/subscriptions/simulate_plan", a1, map[string]any{"amount": 1000, "currency": "JPY", "period": "hourly"}),
		http.StatusBadRequest, payment.CodeValidation, "period")
	wantError(t, f.do(t, "POST", "/subscriptions/simulate_plan", a1, map[string]any{"amount": 1000, "currency": "JPY", "period": "monthly",
		"schedule_settings": map[string]any{"start_on": "31/01/2027"}}), http.StatusBadRequest, payment.CodeValidation, "schedule_settings.start_on")
	wantError(t, f.do(t, "POST", storePath(f.storeA1, "/subscriptions/simulate_plan"), server(f.b1), monthEnd(true)), http.StatusNotFound, payment.CodeNotFound)
	// A simulation makes nothing.
	if ids := listIDs(t, ok(t, f.do(t, "GET", "/subscriptions", a1, nil), http.StatusOK)); len(ids) != 0 {
		t.Errorf("simulations made subscriptions %v", ids)
	}
}

// TestSubscriptionTermination: DELETE, suspend and unsuspend take the
// termination mode from the body or from the query string (where Node
// puts a DELETE's data).
func TestSubscriptionTermination(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	for _, c := range []struct {
		name  string
		query string
		body  any
		want  string // on_next_payment: still current, terminated by its next payment
	}{
		{"query, as Node sends it", "?schedule_settings.termination_mode=on_next_payment", nil, "on_next_payment"},
		{"query, flat", "?termination_mode=on_next_payment", nil, "on_next_payment"},
		{"body", "", map[string]any{"schedule_settings": map[string]any{"termination_mode": "on_next_payment"}}, "on_next_payment"},
		{"body, flat", "", map[string]any{"termination_mode": "on_next_payment"}, "on_next_payment"},
		{"the body before the query", "?termination_mode=immediate", map[string]any{"termination_mode": "on_next_payment"}, "on_next_payment"},
		{"immediate in the query", "?schedule_settings.termination_mode=immediate", nil, "immediate"},
		{"none", "", nil, "immediate"},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := f.currentSub(t)
			rec := f.do(t, "DELETE", f.subPath(id)+c.query, a1, c.body)
			if rec.Code != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
			}
			m := f.getSub(t, id)
			if c.want == "on_next_payment" {
				wantStatus(t, m, "current")
				if jstr(m, "next_payment.terminate_with_status") != "canceled" {
					t.Errorf("next_payment %v, want terminate_with_status canceled", m["next_payment"])
				}
			} else {
				wantStatus(t, m, "canceled")
			}
		})
	}
	// A subscription made to end on its next payment ends so by default.
	id := f.currentSub(t, "schedule_settings", map[string]any{"termination_mode": "on_next_payment"})
	wantNoContent(t, f.do(t, "DELETE", f.subPath(id), a1, nil))
	if m := f.getSub(t, id); jstr(m, "status") != "current" || jstr(m, "next_payment.terminate_with_status") != "canceled" {
		t.Errorf("after DELETE: %v", m)
	}
	for _, q := range []string{"?termination_mode=later", "?schedule_settings.termination_mode=later"} {
		wantError(t, f.do(t, "DELETE", f.subPath(f.currentSub(t))+q, a1, nil), http.StatusBadRequest, payment.CodeValidation,
			"schedule_settings.termination_mode")
	}
	wantError(t, f.do(t, "DELETE", f.subPath(f.currentSub(t)), a1, `{"termination_mode":`), http.StatusBadRequest, payment.CodeValidation, "body")

	// Suspension on the next payment, and its withdrawal.
	id = f.currentSub(t)
	sus := ok(t, f.do(t, "PATCH", f.subPath(id)+"/suspend", a1, map[string]any{"schedule_settings": map[string]any{"termination_mode": "on_next_payment"}}), http.StatusOK)
	if jstr(sus, "status") != "current" || jstr(sus, "next_payment.terminate_with_status") != "suspended" {
		t.Errorf("suspend on the next payment: %v", sus)
	}
	uns := ok(t, f.do(t, "PATCH", "/subscriptions/"+id+"/unsuspend", a1, map[string]any{}), http.StatusOK)
	if jstr(uns, "status") != "current" || !jhasNull(uns, "next_payment.terminate_with_status") {
		t.Errorf("unsuspend: %v", uns)
	}
	wantError(t, f.do(t, "PATCH", f.subPath(id)+"/unsuspend", a1, nil), http.StatusBadRequest, payment.CodeValidation, "status")
	wantError(t, f.do(t, "PATCH", f.subPath(id)+"/suspend", a1, map[string]any{"schedule_settings": map[string]any{"termination_mode": 1}}),
		http.StatusBadRequest, payment.CodeValidation, "schedule_settings.termination_mode")
}

func TestSubscriptionPatch(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	id := f.currentSub(t, "schedule_settings", map[string]any{"retry_interval": "P1D"})
	path := f.subPath(id)
	patch := func(t *testing.T, b any) map[string]any {
		t.Helper()
		f.clock.Advance(time.Second)
		m := ok(t, f.do(t, "PATCH", path, a1, b), http.StatusOK)
		checkPHPSubscription(t, "PATCH", m)
		return m
	}

	t.Run("not updatable", func(t *testing.T) {
		before := f.getSub(t, id)
		for _, c := range []struct {
			field string
			body  map[string]any
		}{
			{"period", map[string]any{"period": "weekly"}},
			{"cyclical_period", map[string]any{"cyclical_period": "P1W"}},
			{"initial_amount", map[string]any{"initial_amount": "100"}},
			{"subscription_plan", map[string]any{"subscription_plan": map[string]any{"plan_type": "fixed_cycles", "fixed_cycles": 3}}},
			{"installment_plan", map[string]any{"installment_plan": map[string]any{"plan_type": "revolving"}}},
			{"schedule_settings.start_on", map[string]any{"schedule_settings": map[string]any{"start_on": "2026-05-01"}}},
			{"schedule_settings.zone_id", map[string]any{"schedule_settings": map[string]any{"zone_id": "UTC", "preserve_end_of_month": true}}},
			{"first_charge_authorization_only", map[string]any{"first_charge_authorization_only": false}},
			{"first_charge_capture_after", map[string]any{"first_charge_capture_after": "P1D"}},
			// With a field it may change: nothing of it is applied.
			{"period", map[string]any{"period": "weekly", "amount": 5000}},
		} {
			errs := wantError(t, f.do(t, "PATCH", path, a1, c.body), http.StatusBadRequest, payment.CodeValidation, c.field)
			for _, e := range errs {
				if e.Field == c.field && e.Reason != "NOT_UPDATABLE" {
					t.Errorf("%s: reason %s, want NOT_UPDATABLE", c.field, e.Reason)
				}
			}
		}
		if after := f.getSub(t, id); !sameJSON(after, before) {
			t.Errorf("refused PATCHes changed the subscription:\n%v\n%v", before, after)
		}
		// Null is no value: PHP strips nulls, others send them.
		patch(t, map[string]any{"period": nil, "cyclical_period": nil, "initial_amount": nil, "subscription_plan": nil,
			"installment_plan": nil, "schedule_settings": map[string]any{"start_on": nil, "zone_id": nil}})
	})

	t.Run("schedule settings", func(t *testing.T) {
		m := patch(t, map[string]any{"schedule_settings": map[string]any{"termination_mode": "on_next_payment", "preserve_end_of_month": true, "retry_interval": "PT48H"}})
		if jstr(m, "schedule_settings.termination_mode") != "on_next_payment" || jget(m, "schedule_settings.preserve_end_of_month") != true ||
			jstr(m, "schedule_settings.retry_interval") != "PT48H" {
			t.Errorf("schedule_settings %v", m["schedule_settings"])
		}
		// The PHP SDK sends the whole schedule_settings back: the zone as
		// it is, is no change.
		m = patch(t, map[string]any{"schedule_settings": map[string]any{"termination_mode": "immediate", "zone_id": "Asia/Tokyo"}})
		if jstr(m, "schedule_settings.retry_interval") != "PT48H" || jget(m, "schedule_settings.preserve_end_of_month") != true {
			t.Errorf("what the PATCH did not name changed: %v", m["schedule_settings"])
		}
		m = patch(t, map[string]any{"schedule_settings": map[string]any{"retry_interval": nil}})
		if !jhasNull(m, "schedule_settings.retry_interval") {
			t.Errorf("retry_interval null did not clear it: %v", m["schedule_settings"])
		}
		wantError(t, f.do(t, "PATCH", path, a1, map[string]any{"schedule_settings": map[string]any{"retry_interval": 5}}),
			http.StatusBadRequest, payment.CodeValidation, "schedule_settings.retry_interval")
		wantError(t, f.do(t, "PATCH", path, a1, map[string]any{"schedule_settings": map[string]any{"termination_mode": "never"}}),
			http.StatusBadRequest, payment.CodeValidation, "schedule_settings.termination_mode")
	})

	t.Run("next payment", func(t *testing.T) {
		m := patch(t, map[string]any{"next_payment": map[string]any{"amount": "1200", "due_date": "2026-04-10", "terminate_with_status": "suspended"}})
		if jnum(m, "next_payment.amount") != 1200 || jstr(m, "next_payment.due_date") != "2026-04-10" || jstr(m, "next_payment.terminate_with_status") != "suspended" ||
			jnum(m, "amount") != 1000 {
			t.Errorf("next_payment %v (amount %v)", m["next_payment"], m["amount"])
		}
		m = patch(t, map[string]any{"next_payment": map[string]any{"terminate_with_status": nil}})
		if !jhasNull(m, "next_payment.terminate_with_status") || jstr(m, "next_payment.due_date") != "2026-04-10" {
			t.Errorf("terminate_with_status null: %v", m["next_payment"])
		}
		wantError(t, f.do(t, "PATCH", path, a1, map[string]any{"next_payment": map[string]any{"due_date": "10/04/2026"}}),
			http.StatusBadRequest, payment.CodeValidation, "next_payment.due_date")
		wantError(t, f.do(t, "PATCH", path, a1, map[string]any{"next_payment": map[string]any{"amount": "lots"}}),
			http.StatusBadRequest, payment.CodeValidation, "next_payment.amount")
	})

	t.Run("the rest", func(t *testing.T) {
		other := f.subToken(t)
		m := patch(t, map[string]any{"amount": "1500", "descriptor": "NEW NAME", "only_direct_currency": true,
			"metadata": map[string]any{"k": "v"}, "transaction_token_id": other})
		if jnum(m, "amount") != 1500 || jstr(m, "descriptor") != "NEW NAME" || jget(m, "only_direct_currency") != true ||
			jstr(m, "metadata.k") != "v" || jstr(m, "transaction_token_id") != other {
			t.Errorf("after PATCH: %v", m)
		}
		wantStatus(t, patch(t, map[string]any{"status": "suspended"}), "suspended")
		wantStatus(t, patch(t, map[string]any{"status": "unpaid"}), "current") // PHP's way to resume
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"status": "canceled"}, "status"},
			{map[string]any{"status": 1}, "status"},
			{map[string]any{"amount": 1.5}, "amount"},
			{map[string]any{"transaction_token_id": "tok"}, "transaction_token_id"},
			{map[string]any{"metadata": "[1"}, "metadata"},
			{map[string]any{"only_direct_currency": "yes"}, "only_direct_currency"},
		} {
			wantError(t, f.do(t, "PATCH", path, a1, c.body), http.StatusBadRequest, payment.CodeValidation, c.field)
		}
	})

	t.Run("token", func(t *testing.T) {
		tok := f.subToken(t)
		m := ok(t, f.do(t, "PATCH", "/subscriptions/"+id+"/token", a1, map[string]any{"transaction_token_id": tok}), http.StatusOK)
		checkPHPSubscription(t, "PATCH token", m)
		if jstr(m, "transaction_token_id") != tok {
			t.Errorf("transaction_token_id %s, want %s", jstr(m, "transaction_token_id"), tok)
		}
		tok = f.token(t, "4000020000000000", "type", "recurring")
		if m := ok(t, f.do(t, "PATCH", path+"/token", a1, map[string]any{"transaction_token_id": tok}), http.StatusOK); jstr(m, "transaction_token_id") != tok {
			t.Errorf("a recurring token: %v", m["transaction_token_id"])
		}
		wantError(t, f.do(t, "PATCH", path+"/token", a1, map[string]any{"transaction_token_id": f.token(t, "4000020000000000")}),
			http.StatusBadRequest, payment.CodeNotSubscriptionToken)
		wantError(t, f.do(t, "PATCH", path+"/token", a1, map[string]any{"transaction_token_id": "x"}), http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
		wantError(t, f.do(t, "PATCH", path+"/token", a1, map[string]any{}), http.StatusBadRequest, payment.CodeValidation, "transaction_token_id")
	})

	t.Run("a payment", func(t *testing.T) {
		sub := f.getSub(t, id)
		pp := path + "/payments/" + jstr(sub, "next_payment.id")
		m := ok(t, f.do(t, "PATCH", pp, a1, map[string]any{"due_date": "2026-04-20", "terminate_with_status": "canceled", "retry_interval": "P3D"}), http.StatusOK)
		checkPHPSchema(t, "PATCH payment", m, "scheduled_payment")
		if jstr(m, "due_date") != "2026-04-20" || jstr(m, "terminate_with_status") != "canceled" || jstr(m, "retry_interval") != "P3D" {
			t.Errorf("after PATCH: %v", m)
		}
		m = ok(t, f.do(t, "PATCH", pp, a1, map[string]any{"terminate_with_status": nil, "retry_interval": nil}), http.StatusOK)
		if !jhasNull(m, "terminate_with_status") || !jhasNull(m, "retry_interval") || jstr(m, "due_date") != "2026-04-20" {
			t.Errorf("nulls: %v", m)
		}
		if got := f.getSub(t, id); !sameJSON(got["next_payment"], any(m)) {
			t.Errorf("the subscription's next_payment %v, the payment %v", got["next_payment"], m)
		}
		for _, c := range []struct {
			body  map[string]any
			field string
		}{
			{map[string]any{"amount": 5000}, "amount"},
			{map[string]any{"due_date": "2026-13-01"}, "due_date"},
			{map[string]any{"due_date": "2026-03-01"}, "due_date"},
			{map[string]any{"is_paid": "yes"}, "is_paid"},
			{map[string]any{"terminate_with_status": "current"}, "terminate_with_status"},
			{map[string]any{"retry_interval": "P2M"}, "retry_interval"},
		} {
			wantError(t, f.do(t, "PATCH", pp, a1, c.body), http.StatusBadRequest, payment.CodeValidation, c.field)
		}
		// Marked paid outside Kessai: the next one is made.
		m = ok(t, f.do(t, "PATCH", pp, a1, map[string]any{"is_paid": true}), http.StatusOK)
		if jget(m, "is_paid") != true {
			t.Errorf("is_paid: %v", m)
		}
		if next := f.getSub(t, id); jstr(next, "next_payment.id") == jstr(m, "id") || jstr(next, "next_payment.due_date") != "2026-05-02" {
			t.Errorf("after is_paid the next payment is %v", next["next_payment"])
		}
	})
}

// TestSubscriptionWebhooks: subscription events carry the subscription
// exactly as GET shows it.
func TestSubscriptionWebhooks(t *testing.T) {
	sender := &fakeSender{status: 200}
	f := newPayFixture(t, payOptions{events: true, webhookSender: sender})
	a1 := server(f.a1)
	f.createHook(t, f.hooksPath(f.storeA1.String()), a1, hookBody(hookURL, "triggers", []string{"subscription_created", "subscription_payment", "subscription_canceled"}))
	created := f.createSub(t)
	id := jstr(created, "id")
	f.drain(t)
	events := map[string]map[string]any{}
	for _, r := range sender.sent() {
		var body map[string]any
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatalf("delivery %s: %v", r.Body, err)
		}
		events[jstr(body, "event")] = body
	}
	if c := events["subscription_created"]; c == nil || !sameJSON(c["data"], any(created)) {
		t.Errorf("subscription_created %v, want the data POST answered %v", c, created)
	}
	got := f.getSub(t, id)
	p := events["subscription_payment"]
	if p == nil || !sameJSON(p["data"], any(got)) {
		t.Fatalf("subscription_payment %v, want the data GET answers %v", p, got)
	}
	checkPHPSubscription(t, "subscription_payment data", p["data"].(map[string]any))
	if jstr(p, "data.status") != "current" || jnum(p, "data.amount") != 1000 {
		t.Errorf("subscription_payment data %v", p["data"])
	}
	wantNoContent(t, f.do(t, "DELETE", f.subPath(id), a1, nil))
	f.drain(t)
	for _, r := range sender.sent() {
		var body map[string]any
		if json.Unmarshal(r.Body, &body) == nil && jstr(body, "event") == "subscription_canceled" {
			if !sameJSON(body["data"], any(f.getSub(t, id))) {
				t.Errorf("subscription_canceled %v, GET %v", body["data"], f.getSub(t, id))
			}
			return
		}
	}
	t.Error("no subscription_canceled delivered")
}

// TestSubscriptionRateLimitClasses: only POST /subscriptions is of the
// charge class; the other routes count as the standard class, their ids
// collapsed in the route's key.
func TestSubscriptionRateLimitClasses(t *testing.T) {
	g := newRLGateway(t, rlOptions{})
	secret := g.secretA1()
	sub := func() string { return storePath(g.base.storeA1, "/subscriptions/"+payment.NewID().String()) }
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"simulate_plan", "POST", "/subscriptions/simulate_plan", `{"amount":1000,"currency":"JPY","period":"monthly"}`},
		{"simulate_plan with the store", "POST", storePath(g.base.storeA1, "/subscriptions/simulate_plan"), `{}`},
		{"list", "GET", "/subscriptions", ""},
		{"get", "GET", sub(), ""},
		{"suspend", "PATCH", "/subscriptions/" + payment.NewID().String() + "/suspend", `{}`},
		{"payments", "GET", sub() + "/payments", ""},
		{"delete", "DELETE", sub(), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			g.settle()
			g.wantStandard(t, g.do(t, c.method, c.path, secret, c.body), 29, 9)
		})
	}
	t.Run("POST /subscriptions", func(t *testing.T) {
		g.settle()
		if got := g.charge(t, g.do(t, "POST", "/subscriptions", secret, `{}`)); got != 99 {
			t.Errorf("charge class remaining %d, want 99", got)
		}
	})
	t.Run("one route for every id", func(t *testing.T) {
		g.settle()
		g.wantStandard(t, g.get(t, sub(), secret), 29, 9)
		g.wantStandard(t, g.get(t, sub(), secret), 28, 9)
		g.wantStandard(t, g.get(t, sub()+"/charges", secret), 29, 9)
	})
}

// TestSubscriptionCycleAtMostTenYears (issue 25, D9): cyclical_period
// "P10Y1D" was accepted though a cycle is at most ten years. Ten years
// are the parser's 120 months: a cycle's days must fit in what its
// months leave of them from any start day, so P10Y is the longest cycle
// in months and P3651D the longest in days (ten years from 1 March 2097
// are 3651 days: 2100 is no leap year).
func TestSubscriptionCycleAtMostTenYears(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	for _, c := range []struct {
		period string
		ok     bool
	}{
		{"P10Y", true},
		{"P120M", true},
		{"P9Y12M", true},
		{"P3651D", true},
		{"P521W4D", true},  // 3651 days
		{"PT87624H", true}, // 3651 days
		{"P9Y11M28D", true},
		{"P9Y365D", true},
		{"P1Y3286D", true},
		{"P10Y1D", false},
		{"P120M1D", false},
		{"P10YT24H", false},
		{"P3652D", false},
		{"P3653D", false},
		{"P3660D", false},
		{"P522W", false},
		{"P9Y11M29D", false},
		{"P9Y366D", false},
		{"P1Y3287D", false},
		{"P11Y", false},
	} {
		t.Run(c.period, func(t *testing.T) {
			rec := f.do(t, "POST", "/subscriptions", server(f.a1), subBody(f.subToken(t), "period", nil, "cyclical_period", c.period))
			if c.ok {
				if m := ok(t, rec, http.StatusCreated); jstr(m, "cyclical_period") != c.period {
					t.Errorf("cyclical_period = %q", jstr(m, "cyclical_period"))
				}
				return
			}
			wantError(t, rec, 400, payment.CodeValidation, "cyclical_period")
		})
	}
}
