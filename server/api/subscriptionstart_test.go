package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// TestSubscriptionStartOnForNodePoll: univapay-node's
// pollSubscriptionWithFirstCharge decides from the subscription it is
// answered whether to wait for a first charge (hasImmediateCharge in
// dist/esm/resources/Subscriptions.js: a truthy initial_amount, no
// schedule_settings, or start_on, read as midnight UTC, not after now).
// For every way a subscription starts, that rule applied to the answer
// must agree with whether a charge was made: where it does not, the SDK
// waits ten minutes for a charge that never comes (a free first period
// with start_on null did), or hands back no charge while one is made.
func TestSubscriptionStartOnForNodePoll(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	now := f.clock.Now() // 2026-03-02 19:00 in Tokyo, 10:00 UTC
	for _, c := range []struct {
		name    string
		kv      []any
		startOn any // what schedule_settings.start_on must be
		charged bool
	}{
		{"at once", nil, nil, true},
		{"an initial amount", []any{"initial_amount", 500}, "2026-04-02", true},
		{"a free first period", []any{"initial_amount", 0}, "2026-04-02", false},
		{"a free first week", []any{"period", "weekly", "initial_amount", "0"}, "2026-03-09", false},
		{"a later start", []any{"schedule_settings", map[string]any{"start_on": "2026-03-20"}}, "2026-03-20", false},
		{"an initial amount before a later start", []any{"initial_amount", 300, "schedule_settings", map[string]any{"start_on": "2026-03-20"}}, "2026-03-20", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			created := f.createSub(t, c.kv...)
			id := jstr(created, "id")
			f.process(t)
			for what, m := range map[string]map[string]any{"created": created, "GET": f.getSub(t, id)} {
				if got := jget(m, "schedule_settings.start_on"); got != c.startOn {
					t.Errorf("%s: schedule_settings.start_on = %v, want %v", what, got, c.startOn)
				}
				immediate := false
				if amount, isNumber := jget(m, "initial_amount").(float64); isNumber && amount != 0 {
					immediate = true
				}
				switch s := jget(m, "schedule_settings.start_on").(type) {
				case nil:
					immediate = true // new Date(null) is 1970
				case string:
					day, err := time.Parse(time.DateOnly, s)
					if err != nil {
						t.Fatalf("%s: start_on %q: %v", what, s, err)
					}
					immediate = immediate || !day.After(now)
				}
				if immediate != c.charged {
					t.Errorf("%s: the SDK's hasImmediateCharge = %v, want %v (%v)", what, immediate, c.charged, jget(m, "schedule_settings"))
				}
			}
			charges := ok(t, f.do(t, "GET", f.subPath(id)+"/charges", server(f.a1), nil), http.StatusOK)
			if items, _ := charges["items"].([]any); (len(items) > 0) != c.charged {
				t.Errorf("%d charges, want charged %v", len(items), c.charged)
			}
		})
	}
}

// TestSubscriptionStartOnSentBack: an update may repeat
// schedule_settings as the subscription shows it (the PHP SDK's
// Subscription::patch sends a ScheduleSettings whole), start_on included
// when it is the day after an initial amount that no request named; any
// other day is NOT_UPDATABLE.
func TestSubscriptionStartOnSentBack(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	for _, kv := range [][]any{
		{"initial_amount", 500},
		{"initial_amount", 0},
		{"schedule_settings", map[string]any{"start_on": "2026-03-20", "zone_id": "Europe/Paris"}},
	} {
		id := jstr(f.createSub(t, kv...), "id")
		f.process(t)
		shown, _ := jget(f.getSub(t, id), "schedule_settings").(map[string]any)
		back := map[string]any{"schedule_settings": map[string]any{"start_on": shown["start_on"], "zone_id": shown["zone_id"]}}
		got := ok(t, f.do(t, "PATCH", f.subPath(id), a1, back), http.StatusOK)
		if s := jget(got, "schedule_settings.start_on"); s != shown["start_on"] {
			t.Errorf("%v: start_on %v after sending it back, want %v", kv, s, shown["start_on"])
		}
		other := map[string]any{"schedule_settings": map[string]any{"start_on": "2026-05-05"}}
		wantError(t, f.do(t, "PATCH", f.subPath(id), a1, other), http.StatusBadRequest, payment.CodeValidation, "schedule_settings.start_on")
	}
}
