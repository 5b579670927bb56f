package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest/signaturetest"
	"github.com/kessai/kessai/server/payment"
)

// Handler tests of the webhook routes: CRUD at both levels, validation,
// who sees which webhook, the quota of 20 active under concurrency, unique
// URLs, the delivery log and redelivery; over the payments fixture's real
// SQLite file.

const hookURL = "https://shop.example/kessai/webhook"

func hookBody(url string, kv ...any) map[string]any {
	return with(map[string]any{"triggers": []string{"charge_finished"}, "url": url}, kv...)
}

func (f *payFixture) hooksPath(store string) string {
	if store == "" {
		return "/webhooks"
	}
	return "/stores/" + store + "/webhooks"
}

// createHook creates a webhook and returns its answer.
func (f *payFixture) createHook(t testing.TB, path, auth string, b map[string]any) map[string]any {
	t.Helper()
	return ok(t, f.do(t, "POST", path, auth, b), http.StatusCreated)
}

// webhookKeys are the fields of a webhook on the wire (secret only in the
// answer to its creation).
var webhookKeys = []string{"active", "auth_token", "created_on", "id", "is_integration", "merchant_id", "store_id",
	"triggers", "updated_on", "url"}

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestWebhookCRUD(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	store := f.storeA1.String()

	created := f.createHook(t, f.hooksPath(store), a1, hookBody(hookURL, "auth_token", "Bearer shop-secret",
		"triggers", []string{"charge_finished", "refund_finished"}))
	id := jstr(created, "id")
	if got, want := keysOf(created), append(slices.Clone(webhookKeys), "secret"); !slices.Equal(got, sortedCopy(want)) {
		t.Errorf("created webhook keys %v, want %v", got, sortedCopy(want))
	}
	if s := jstr(created, "secret"); !strings.HasPrefix(s, "whsec_") || len(s) < 30 {
		t.Errorf("secret = %q, want whsec_…", s)
	}
	for path, want := range map[string]any{
		"merchant_id": f.merchantA.String(), "store_id": store, "url": hookURL, "auth_token": "Bearer shop-secret",
		"active": true, "is_integration": false,
	} {
		if got := jget(created, path); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if got := fmt.Sprint(jget(created, "triggers")); got != "[charge_finished refund_finished]" {
		t.Errorf("triggers = %s", got)
	}
	if _, err := time.Parse(time.RFC3339Nano, jstr(created, "created_on")); err != nil {
		t.Errorf("created_on %q: %v", jstr(created, "created_on"), err)
	}

	got := ok(t, f.do(t, "GET", f.hooksPath(store)+"/"+id, a1, nil), http.StatusOK)
	if !slices.Equal(keysOf(got), webhookKeys) {
		t.Errorf("read webhook keys %v, want %v (no secret)", keysOf(got), webhookKeys)
	}
	// A store token reaches its store's webhooks without the store too.
	ok(t, f.do(t, "GET", "/webhooks/"+id, a1, nil), http.StatusOK)
	if ids := listIDs(t, ok(t, f.do(t, "GET", f.hooksPath(store), a1, nil), http.StatusOK)); !slices.Equal(ids, []string{id}) {
		t.Errorf("list = %v, want [%s]", ids, id)
	}

	// A change leaves what it does not name as it was.
	f.clock.Advance(time.Minute)
	upd := ok(t, f.do(t, "PATCH", f.hooksPath(store)+"/"+id, a1, map[string]any{"active": false, "url": hookURL + "/v2"}), http.StatusOK)
	if jget(upd, "active") != false || jstr(upd, "url") != hookURL+"/v2" || jstr(upd, "auth_token") != "Bearer shop-secret" ||
		fmt.Sprint(jget(upd, "triggers")) != "[charge_finished refund_finished]" {
		t.Errorf("after PATCH: %v", upd)
	}
	if jstr(upd, "updated_on") == jstr(created, "updated_on") || jstr(upd, "created_on") != jstr(created, "created_on") {
		t.Errorf("PATCH: created_on %s → %s, updated_on %s → %s", jstr(created, "created_on"), jstr(upd, "created_on"),
			jstr(created, "updated_on"), jstr(upd, "updated_on"))
	}
	upd = ok(t, f.do(t, "PATCH", "/webhooks/"+id, a1, map[string]any{"triggers": []string{"token_created"}, "auth_token": ""}), http.StatusOK)
	if fmt.Sprint(jget(upd, "triggers")) != "[token_created]" || !jhasNull(upd, "auth_token") {
		t.Errorf("after second PATCH: %v", upd)
	}
	// The spec's spelling of token 3-D Secure's event, and the SDK's.
	ok(t, f.do(t, "PATCH", "/webhooks/"+id, a1, map[string]any{"triggers": []string{"token_three_d_s_updated", "token_three_ds_updated"}}), http.StatusOK)

	rec := f.do(t, "DELETE", f.hooksPath(store)+"/"+id, a1, nil)
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("DELETE: %d %q, want 204 and no body", rec.Code, rec.Body)
	}
	wantError(t, f.do(t, "GET", f.hooksPath(store)+"/"+id, a1, nil), http.StatusNotFound, payment.CodeNotFound)
	wantError(t, f.do(t, "DELETE", f.hooksPath(store)+"/"+id, a1, nil), http.StatusNotFound, payment.CodeNotFound)
	if ids := listIDs(t, ok(t, f.do(t, "GET", f.hooksPath(store), a1, nil), http.StatusOK)); len(ids) != 0 {
		t.Errorf("list after DELETE = %v", ids)
	}

	// A merchant token without a store makes a merchant-level webhook.
	m := f.createHook(t, "/webhooks", server(f.merchA), hookBody(hookURL))
	if !jhasNull(m, "store_id") || jstr(m, "merchant_id") != f.merchantA.String() {
		t.Errorf("merchant-level webhook: store_id %v merchant_id %v", jget(m, "store_id"), jget(m, "merchant_id"))
	}
	// A store token without a store makes its store's.
	s := f.createHook(t, "/webhooks", a1, hookBody(hookURL))
	if jstr(s, "store_id") != store {
		t.Errorf("POST /webhooks with a store token: store_id %v, want %s", jget(s, "store_id"), store)
	}
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func TestWebhookValidation(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	path := f.hooksPath(f.storeA1.String())
	existing := jstr(f.createHook(t, path, a1, hookBody(hookURL)), "id")
	big := strings.Repeat("a", 900<<10)
	cases := []struct {
		name   string
		patch  bool
		body   any
		status int
		code   payment.Code
		fields []string
	}{
		{"Empty", false, map[string]any{}, 400, payment.CodeValidation, []string{"triggers", "url"}},
		{"NoTriggers", false, hookBody(hookURL, "triggers", []string{}), 400, payment.CodeValidation, []string{"triggers"}},
		{"NullTriggers", false, hookBody(hookURL, "triggers", nil), 400, payment.CodeValidation, []string{"triggers"}},
		{"UnknownTrigger", false, hookBody(hookURL, "triggers", []string{"charge_exploded"}), 400, payment.CodeValidation, []string{"triggers"}},
		{"CaseOfTrigger", false, hookBody(hookURL, "triggers", []string{"CHARGE_FINISHED"}), 400, payment.CodeValidation, []string{"triggers"}},
		{"RepeatedTrigger", false, hookBody(hookURL, "triggers", []string{"charge_finished", "charge_finished"}), 400, payment.CodeValidation, []string{"triggers"}},
		{"TriggersString", false, hookBody(hookURL, "triggers", "charge_finished"), 400, payment.CodeValidation, []string{"triggers"}},
		{"TriggersNumbers", false, hookBody(hookURL, "triggers", []int{1}), 400, payment.CodeValidation, []string{"triggers"}},
		{"TooManyTriggers", false, hookBody(hookURL, "triggers", slices.Repeat([]string{"charge_finished"}, 40)), 400, payment.CodeValidation, []string{"triggers"}},
		{"NoURL", false, map[string]any{"triggers": []string{"charge_finished"}}, 400, payment.CodeValidation, []string{"url"}},
		{"EmptyURL", false, hookBody(""), 400, payment.CodeValidation, []string{"url"}},
		{"JavascriptURL", false, hookBody("javascript:alert(1)"), 400, payment.CodeValidation, []string{"url"}},
		{"JavascriptSlashes", false, hookBody("javascript://shop.example/%0aalert(1)"), 400, payment.CodeValidation, []string{"url"}},
		{"DataURL", false, hookBody("data:text/html,hi"), 400, payment.CodeValidation, []string{"url"}},
		{"FTPURL", false, hookBody("ftp://shop.example/hook"), 400, payment.CodeValidation, []string{"url"}},
		{"RelativeURL", false, hookBody("/hook"), 400, payment.CodeValidation, []string{"url"}},
		{"SpaceInURL", false, hookBody("https://shop example/hook"), 400, payment.CodeValidation, []string{"url"}},
		{"UserinfoURL", false, hookBody("https://user:pw@shop.example/hook"), 400, payment.CodeValidation, []string{"url"}},
		{"URLNumber", false, hookBody(hookURL, "url", 42), 400, payment.CodeValidation, []string{"url"}},
		{"MegabyteURL", false, hookBody("https://shop.example/" + big), 400, payment.CodeValidation, []string{"url"}},
		{"CardNumberInURL", false, hookBody("https://shop.example/4242424242424242"), 400, payment.CodeValidation, []string{"url"}},
		{"MegabyteAuthToken", false, hookBody(hookURL+"/a", "auth_token", big), 400, payment.CodeValidation, []string{"auth_token"}},
		{"ControlInAuthToken", false, hookBody(hookURL+"/a", "auth_token", "Bearer a\r\nX-Injected: 1"), 400, payment.CodeValidation, []string{"auth_token"}},
		{"AuthTokenNumber", false, hookBody(hookURL+"/a", "auth_token", 7), 400, payment.CodeValidation, []string{"auth_token"}},
		{"ActiveString", false, hookBody(hookURL+"/a", "active", "true"), 400, payment.CodeValidation, []string{"active"}},
		{"ActiveNumber", false, hookBody(hookURL+"/a", "active", 1), 400, payment.CodeValidation, []string{"active"}},
		{"NotJSON", false, "{triggers:", 400, payment.CodeValidation, []string{"body"}},
		{"BodyTooLarge", false, hookBody("https://shop.example/" + strings.Repeat("a", 2<<20)), 413, payment.CodeBodyTooLarge, nil},
		{"PatchNoTriggers", true, map[string]any{"triggers": []string{}}, 400, payment.CodeValidation, []string{"triggers"}},
		{"PatchUnknownTrigger", true, map[string]any{"triggers": []string{"nope"}}, 400, payment.CodeValidation, []string{"triggers"}},
		{"PatchEmptyURL", true, map[string]any{"url": ""}, 400, payment.CodeValidation, []string{"url"}},
		{"PatchJavascriptURL", true, map[string]any{"url": "javascript:alert(1)"}, 400, payment.CodeValidation, []string{"url"}},
		{"PatchMegabyteURL", true, map[string]any{"url": "https://shop.example/" + big}, 400, payment.CodeValidation, []string{"url"}},
		{"PatchActiveString", true, map[string]any{"active": "false"}, 400, payment.CodeValidation, []string{"active"}},
		{"PatchActiveNull", true, map[string]any{"active": nil}, 200, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			method, p := "POST", path
			if tc.patch {
				method, p = "PATCH", path+"/"+existing
			}
			rec := f.do(t, method, p, a1, tc.body)
			if tc.status == 200 {
				ok(t, rec, 200)
				return
			}
			wantError(t, rec, tc.status, tc.code, tc.fields...)
		})
	}
	// Nothing was made or changed by the refused requests.
	list := ok(t, f.do(t, "GET", path, a1, nil), http.StatusOK)
	if ids := listIDs(t, list); !slices.Equal(ids, []string{existing}) {
		t.Errorf("webhooks after the refused requests: %v", ids)
	}
	got := ok(t, f.do(t, "GET", path+"/"+existing, a1, nil), http.StatusOK)
	if jstr(got, "url") != hookURL || jget(got, "active") != true || fmt.Sprint(jget(got, "triggers")) != "[charge_finished]" {
		t.Errorf("webhook after the refused changes: %v", got)
	}
}

// TestWebhookVisibility: a store token sees its store's webhooks, a
// merchant token its merchant-level ones without a store and any of its
// stores' with one; nobody sees another merchant's or another mode's, and
// a browser token none at all.
func TestWebhookVisibility(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1, a2, merch, b1, live := server(f.a1), server(f.a2), server(f.merchA), server(f.b1), server(f.a1Live)
	pA1, pA2 := f.hooksPath(f.storeA1.String()), f.hooksPath(f.storeA2.String())
	w1 := jstr(f.createHook(t, pA1, a1, hookBody(hookURL)), "id")
	w2 := jstr(f.createHook(t, pA2, merch, hookBody(hookURL)), "id")
	m := jstr(f.createHook(t, "/webhooks", merch, hookBody(hookURL)), "id")
	wLive := jstr(f.createHook(t, pA1, live, hookBody(hookURL)), "id")
	wB := jstr(f.createHook(t, f.hooksPath(f.storeB1.String()), b1, hookBody(hookURL)), "id")

	lists := []struct {
		name, path, auth string
		want             []string
	}{
		{"StoreTokenOwnStore", pA1, a1, []string{w1}},
		{"StoreTokenNoStore", "/webhooks", a1, []string{w1}},
		{"OtherStoreToken", pA2, a2, []string{w2}},
		{"MerchantNoStore", "/webhooks", merch, []string{m}},
		{"MerchantStoreA1", pA1, merch, []string{w1}},
		{"MerchantStoreA2", pA2, merch, []string{w2}},
		{"LiveToken", pA1, live, []string{wLive}},
		{"OtherMerchant", "/webhooks", b1, []string{wB}},
	}
	for _, tc := range lists {
		t.Run("List"+tc.name, func(t *testing.T) {
			if ids := listIDs(t, ok(t, f.do(t, "GET", tc.path, tc.auth, nil), http.StatusOK)); !sameSet(ids, tc.want) {
				t.Errorf("%s = %v, want %v", tc.path, ids, tc.want)
			}
		})
	}
	wantError(t, f.do(t, "GET", pA2, a1, nil), http.StatusNotFound, payment.CodeNotFound)
	wantError(t, f.do(t, "GET", pA1, b1, nil), http.StatusNotFound, payment.CodeNotFound)
	wantError(t, f.do(t, "POST", pA1, b1, hookBody(hookURL+"/b")), http.StatusNotFound, payment.CodeNotFound)

	hidden := []struct {
		name, path, auth string
	}{
		{"OtherStoresWebhook", pA2 + "/" + w2, a1},
		{"OtherStoresWebhookNoStore", "/webhooks/" + w2, a1},
		{"MerchantLevelToStoreToken", "/webhooks/" + m, a1},
		{"MerchantLevelUnderAStore", pA1 + "/" + m, merch},
		{"StoreWebhookUnderOtherStore", pA2 + "/" + w1, merch},
		{"OtherMerchant", "/webhooks/" + w1, b1},
		{"OtherMerchantUnderItsStore", f.hooksPath(f.storeB1.String()) + "/" + w1, b1},
		{"OtherMerchantsFromA", "/webhooks/" + wB, merch},
		{"OtherMode", pA1 + "/" + w1, live},
		{"OtherModeNoStore", "/webhooks/" + w1, live},
		{"LiveFromTest", pA1 + "/" + wLive, a1},
		{"NotAUUID", pA1 + "/not-a-uuid", a1},
		{"Unknown", pA1 + "/" + payment.NewID().String(), a1},
	}
	for _, tc := range hidden {
		t.Run("Hidden"+tc.name, func(t *testing.T) {
			wantError(t, f.do(t, "GET", tc.path, tc.auth, nil), http.StatusNotFound, payment.CodeNotFound)
			wantError(t, f.do(t, "PATCH", tc.path, tc.auth, map[string]any{"active": false}), http.StatusNotFound, payment.CodeNotFound)
			wantError(t, f.do(t, "GET", tc.path+"/events", tc.auth, nil), http.StatusNotFound, payment.CodeNotFound)
			wantError(t, f.do(t, "POST", tc.path+"/events/"+payment.NewID().String()+"/redeliver", tc.auth, nil),
				http.StatusNotFound, payment.CodeNotFound)
			wantError(t, f.do(t, "DELETE", tc.path, tc.auth, nil), http.StatusNotFound, payment.CodeNotFound)
		})
	}
	// A merchant token reaches any of its webhooks by id without a store.
	for _, id := range []string{w1, w2, m} {
		ok(t, f.do(t, "GET", "/webhooks/"+id, merch, nil), http.StatusOK)
	}
	// Nothing hidden was changed or deleted.
	for _, c := range []struct{ path, auth string }{{pA1 + "/" + w1, a1}, {pA2 + "/" + w2, a2}, {"/webhooks/" + m, merch}, {pA1 + "/" + wLive, live}} {
		if got := ok(t, f.do(t, "GET", c.path, c.auth, nil), http.StatusOK); jget(got, "active") != true {
			t.Errorf("%s was changed: %v", c.path, got)
		}
	}
}

// TestWebhookRoutesRefuseBrowserTokens: every webhook route needs the
// token's secret, from any origin.
func TestWebhookRoutesRefuseBrowserTokens(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	pA1 := f.hooksPath(f.storeA1.String())
	id := jstr(f.createHook(t, pA1, server(f.a1), hookBody(hookURL)), "id")
	ev := payment.NewID().String()
	br, fromShop := browser(f.a1), origin(payShopOrigin)
	for _, prefix := range []string{pA1, "/webhooks"} {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", prefix, nil},
			{"POST", prefix, hookBody(hookURL + "/browser")},
			{"GET", prefix + "/" + id, nil},
			{"PATCH", prefix + "/" + id, map[string]any{"active": false}},
			{"DELETE", prefix + "/" + id, nil},
			{"GET", prefix + "/" + id + "/events", nil},
			{"POST", prefix + "/" + id + "/events/" + ev + "/redeliver", nil},
		} {
			t.Run(c.method+" "+strings.ReplaceAll(c.path, "/", "_"), func(t *testing.T) {
				wantError(t, f.do(t, c.method, c.path, br, c.body, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
			})
		}
	}
	wantError(t, f.do(t, "GET", "/events/stream", br, nil, fromShop), http.StatusForbidden, payment.CodeInvalidPermissions)
	got := ok(t, f.do(t, "GET", pA1+"/"+id, server(f.a1), nil), http.StatusOK)
	if jget(got, "active") != true {
		t.Errorf("webhook after browser requests: %v", got)
	}
	if ids := listIDs(t, ok(t, f.do(t, "GET", pA1, server(f.a1), nil), http.StatusOK)); len(ids) != 1 {
		t.Errorf("webhooks after browser requests: %v", ids)
	}
}

// parallel sends n requests at once and counts their statuses.
func (f *payFixture) parallel(t *testing.T, n int, req func(i int) *httptest.ResponseRecorder) map[int]int {
	t.Helper()
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			rec := req(i)
			mu.Lock()
			counts[rec.Code]++
			mu.Unlock()
			if rec.Code == http.StatusBadRequest && !strings.Contains(rec.Body.String(), string(payment.CodeResourceLimit)) {
				t.Errorf("request %d: %s", i, rec.Body)
			}
		})
	}
	close(start)
	wg.Wait()
	return counts
}

// TestWebhookQuota: 20 active webhooks per store and 20 merchant-level per
// merchant, counted in the transaction that makes or activates one, so
// concurrent requests cannot overshoot; an inactive one does not count,
// activating it counts again, deactivating or deleting frees a place.
func TestWebhookQuota(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	pA1 := f.hooksPath(f.storeA1.String())
	counts := f.parallel(t, 40, func(i int) *httptest.ResponseRecorder {
		return f.do(t, "POST", pA1, a1, hookBody(fmt.Sprintf("%s/%d", hookURL, i)))
	})
	if counts[201] != 20 || counts[400] != 20 || len(counts) != 2 {
		t.Fatalf("40 parallel creations: %v, want 20 × 201 and 20 × 400", counts)
	}
	hooks := listIDs(t, ok(t, f.do(t, "GET", pA1+"?limit=100", a1, nil), http.StatusOK))
	if len(hooks) != 20 {
		t.Fatalf("%d webhooks after the race, want 20", len(hooks))
	}
	wantError(t, f.do(t, "POST", pA1, a1, hookBody(hookURL+"/extra")), http.StatusBadRequest, payment.CodeResourceLimit)

	// Other owners have quotas of their own.
	f.createHook(t, f.hooksPath(f.storeA2.String()), server(f.a2), hookBody(hookURL))
	f.createHook(t, "/webhooks", server(f.merchA), hookBody(hookURL))

	// Inactive webhooks do not count; activating one counts again.
	var inactive []string
	for i := range 25 {
		inactive = append(inactive, jstr(f.createHook(t, pA1, a1, hookBody(fmt.Sprintf("%s/off/%d", hookURL, i), "active", false)), "id"))
	}
	wantError(t, f.do(t, "PATCH", pA1+"/"+inactive[0], a1, map[string]any{"active": true}), http.StatusBadRequest, payment.CodeResourceLimit)
	// A change that leaves it inactive is no activation.
	ok(t, f.do(t, "PATCH", pA1+"/"+inactive[0], a1, map[string]any{"active": false, "url": hookURL + "/off/renamed"}), http.StatusOK)
	// And an active one changed stays counted once.
	ok(t, f.do(t, "PATCH", pA1+"/"+hooks[0], a1, map[string]any{"active": true, "triggers": []string{"token_created"}}), http.StatusOK)
	wantError(t, f.do(t, "PATCH", pA1+"/"+inactive[0], a1, map[string]any{"active": true}), http.StatusBadRequest, payment.CodeResourceLimit)

	// Deactivating three and deleting two frees five places, which 25
	// concurrent activations share.
	for _, id := range hooks[:3] {
		ok(t, f.do(t, "PATCH", pA1+"/"+id, a1, map[string]any{"active": false}), http.StatusOK)
	}
	for _, id := range hooks[3:5] {
		if rec := f.do(t, "DELETE", pA1+"/"+id, a1, nil); rec.Code != http.StatusNoContent {
			t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
		}
	}
	counts = f.parallel(t, len(inactive), func(i int) *httptest.ResponseRecorder {
		return f.do(t, "PATCH", pA1+"/"+inactive[i], a1, map[string]any{"active": true})
	})
	if counts[200] != 5 || counts[400] != 20 || len(counts) != 2 {
		t.Fatalf("25 parallel activations with 5 places: %v", counts)
	}
	wantError(t, f.do(t, "PATCH", pA1+"/"+hooks[0], a1, map[string]any{"active": true}), http.StatusBadRequest, payment.CodeResourceLimit)
	// Deleting an inactive webhook frees nothing.
	if rec := f.do(t, "DELETE", pA1+"/"+hooks[1], a1, nil); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", rec.Code, rec.Body)
	}
	wantError(t, f.do(t, "POST", pA1, a1, hookBody(hookURL+"/more")), http.StatusBadRequest, payment.CodeResourceLimit)
	active := 0
	for _, h := range ok(t, f.do(t, "GET", pA1+"?limit=100", a1, nil), http.StatusOK)["items"].([]any) {
		if h.(map[string]any)["active"] == true {
			active++
		}
	}
	if active != 20 {
		t.Errorf("%d active webhooks, want 20", active)
	}
}

// TestWebhookMerchantQuotaConcurrent: the merchant-level quota under the
// same race.
func TestWebhookMerchantQuotaConcurrent(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	merch := server(f.merchA)
	counts := f.parallel(t, 40, func(i int) *httptest.ResponseRecorder {
		return f.do(t, "POST", "/webhooks", merch, hookBody(fmt.Sprintf("%s/%d", hookURL, i)))
	})
	if counts[201] != 20 || counts[400] != 20 || len(counts) != 2 {
		t.Fatalf("40 parallel merchant-level creations: %v, want 20 × 201 and 20 × 400", counts)
	}
	// A store of the merchant still has its own 20.
	f.createHook(t, f.hooksPath(f.storeA1.String()), merch, hookBody(hookURL))
}

func TestWebhookDuplicateURL(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1 := server(f.a1)
	pA1 := f.hooksPath(f.storeA1.String())
	first := jstr(f.createHook(t, pA1, a1, hookBody(hookURL)), "id")
	other := jstr(f.createHook(t, pA1, a1, hookBody(hookURL+"/other")), "id")
	for _, u := range []string{hookURL, strings.ToUpper(hookURL), "https://Shop.Example/Kessai/Webhook"} {
		t.Run(u, func(t *testing.T) {
			wantError(t, f.do(t, "POST", pA1, a1, hookBody(u)), http.StatusConflict, payment.CodeWebhookURLExists)
			wantError(t, f.do(t, "POST", pA1, a1, hookBody(u, "active", false)), http.StatusConflict, payment.CodeWebhookURLExists)
			wantError(t, f.do(t, "PATCH", pA1+"/"+other, a1, map[string]any{"url": u}), http.StatusConflict, payment.CodeWebhookURLExists)
		})
	}
	// An inactive webhook keeps its URL too.
	ok(t, f.do(t, "PATCH", pA1+"/"+first, a1, map[string]any{"active": false}), http.StatusOK)
	wantError(t, f.do(t, "POST", pA1, a1, hookBody(hookURL)), http.StatusConflict, payment.CodeWebhookURLExists)
	// A webhook may be given its own URL again, in another case.
	ok(t, f.do(t, "PATCH", pA1+"/"+first, a1, map[string]any{"url": strings.ToUpper(hookURL)}), http.StatusOK)
	// Other owners and the other mode may use it.
	f.createHook(t, f.hooksPath(f.storeA2.String()), server(f.a2), hookBody(hookURL))
	f.createHook(t, "/webhooks", server(f.merchA), hookBody(hookURL))
	f.createHook(t, pA1, server(f.a1Live), hookBody(hookURL))
	f.createHook(t, f.hooksPath(f.storeB1.String()), server(f.b1), hookBody(hookURL))
	wantError(t, f.do(t, "POST", "/webhooks", server(f.merchA), hookBody(strings.ToUpper(hookURL))), http.StatusConflict, payment.CodeWebhookURLExists)
	// Once deleted, the URL is free.
	if rec := f.do(t, "DELETE", pA1+"/"+first, a1, nil); rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", rec.Code)
	}
	f.createHook(t, pA1, a1, hookBody(hookURL))
}

// fakeSender is a webhook receiver behind payment.WebhookSender: it keeps
// every request and answers status().
type fakeSender struct {
	mu     sync.Mutex
	reqs   []payment.WebhookRequest
	status int
}

func (s *fakeSender) Send(_ context.Context, req payment.WebhookRequest) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if s.status == 0 {
		return 0, errors.New("connection refused")
	}
	return s.status, nil
}

// CheckURL takes every URL: which addresses a webhook may reach is
// webhookhttp's rule, tested there and through the gateway.
func (s *fakeSender) CheckURL(context.Context, string, bool) error { return nil }

func (s *fakeSender) answer(status int) {
	s.mu.Lock()
	s.status = status
	s.mu.Unlock()
}

func (s *fakeSender) sent() []payment.WebhookRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// drain runs the worker's due work until none is left; failed deliveries
// are rescheduled, not errors of the test.
func (f *payFixture) drain(t testing.TB) {
	t.Helper()
	for range 20 {
		n, err := f.svc.Work.ProcessPending(context.Background(), 100)
		if err != nil && !strings.Contains(err.Error(), "webhook delivery failed") {
			t.Fatalf("ProcessPending: %v", err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("ProcessPending still finds work after 20 rounds")
}

func TestWebhookLogAndRedelivery(t *testing.T) {
	sender := &fakeSender{status: 500}
	f := newPayFixture(t, payOptions{events: true, webhookSender: sender})
	a1 := server(f.a1)
	pA1 := f.hooksPath(f.storeA1.String())
	created := f.createHook(t, pA1, a1, hookBody(hookURL, "auth_token", "Bearer shop-secret"))
	hook, secret := jstr(created, "id"), jstr(created, "secret")
	merchHook := f.createHook(t, "/webhooks", server(f.merchA), hookBody(hookURL, "triggers", []string{"charge_finished", "charge_updated"}))
	// Another webhook of the store that hears other events only.
	f.createHook(t, pA1, a1, hookBody(hookURL+"/tokens", "triggers", []string{"token_created"}))

	charge := f.charge(t, f.token(t, "4000020000000000"), 1000, "JPY")
	f.drain(t)

	logPath := pA1 + "/" + hook + "/events"
	log := ok(t, f.do(t, "GET", logPath, a1, nil), http.StatusOK)
	items, _ := log["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("log = %v, want one line", log)
	}
	line := items[0].(map[string]any)
	if got, want := keysOf(line), []string{"attempts", "created_on", "data", "error_message", "event", "fired_on", "id", "status", "successful", "webhook_id"}; !slices.Equal(got, want) {
		t.Errorf("log line keys %v, want %v", got, want)
	}
	event := jstr(line, "id")
	if jstr(line, "webhook_id") != hook || jstr(line, "event") != "charge_finished" || jstr(line, "data.id") != charge ||
		jstr(line, "data.status") != "successful" || jget(line, "successful") != false || jstr(line, "status") != "pending" ||
		jnum(line, "attempts") != 1 || jstr(line, "error_message") != "status 500" || jstr(line, "fired_on") == "" {
		t.Errorf("log line after a failed attempt: %v", line)
	}
	// The data is what a GET of the charge answers.
	if got := f.getCharge(t, charge); jstr(got, "updated_on") != jstr(line, "data.updated_on") || jnum(got, "charged_amount") != jnum(line, "data.charged_amount") {
		t.Errorf("event data %v, charge %v", line["data"], got)
	}

	reqs := sender.sent()
	var toHook []payment.WebhookRequest
	for _, r := range reqs {
		if r.Headers["webhook-id"] == event && r.Headers["Authorization"] == "Bearer shop-secret" {
			toHook = append(toHook, r)
		}
	}
	if len(toHook) != 1 {
		t.Fatalf("deliveries to the store's webhook: %d of %d", len(toHook), len(reqs))
	}
	d := toHook[0]
	if err := signaturetest.Verify(secret, d.Headers["webhook-id"], d.Headers["webhook-timestamp"], d.Headers["webhook-signature"],
		d.Body, f.clock.Now(), 5*time.Minute); err != nil {
		t.Errorf("delivery does not verify with the webhook's secret: %v", err)
	}
	var body map[string]any
	if err := json.Unmarshal(d.Body, &body); err != nil || jstr(body, "id") != event || jstr(body, "event") != "charge_finished" ||
		jstr(body, "data.id") != charge || d.Headers["Content-Type"] != "application/json" || d.URL != hookURL || d.Live {
		t.Errorf("delivery %s %v: %s (%v)", d.URL, d.Headers, d.Body, err)
	}

	// Redelivery starts a new series; the receiver now accepts it.
	sender.answer(200)
	rd := ok(t, f.do(t, "POST", logPath+"/"+event+"/redeliver", a1, nil), http.StatusOK)
	if jstr(rd, "id") != event || jstr(rd, "status") != "pending" || jnum(rd, "attempts") != 0 || !jhasNull(rd, "error_message") {
		t.Errorf("redelivery answered %v", rd)
	}
	f.clock.Advance(10 * time.Second)
	f.drain(t)
	line = ok(t, f.do(t, "GET", logPath, a1, nil), http.StatusOK)["items"].([]any)[0].(map[string]any)
	if jget(line, "successful") != true || jstr(line, "status") != "successful" || jnum(line, "attempts") != 1 || !jhasNull(line, "error_message") {
		t.Errorf("log line after the redelivery: %v", line)
	}

	// The merchant-level webhook heard the store's event; it is
	// redelivered without a store in the path.
	mLog := ok(t, f.do(t, "GET", "/webhooks/"+jstr(merchHook, "id")+"/events", server(f.merchA), nil), http.StatusOK)
	if ids := listIDs(t, mLog); !slices.Equal(ids, []string{event}) {
		t.Errorf("merchant-level log = %v, want [%s]", ids, event)
	}
	ok(t, f.do(t, "POST", "/webhooks/"+jstr(merchHook, "id")+"/events/"+event+"/redeliver", server(f.merchA), nil), http.StatusOK)

	// Unknown events, and events the webhook never had, are not found.
	wantError(t, f.do(t, "POST", logPath+"/"+payment.NewID().String()+"/redeliver", a1, nil), http.StatusNotFound, payment.CodeNotFound)
	wantError(t, f.do(t, "POST", logPath+"/not-an-id/redeliver", a1, nil), http.StatusNotFound, payment.CodeNotFound)
	tokHooks := listIDs(t, ok(t, f.do(t, "GET", pA1, a1, nil), http.StatusOK))
	for _, id := range tokHooks {
		if id != hook {
			wantError(t, f.do(t, "POST", pA1+"/"+id+"/events/"+event+"/redeliver", a1, nil), http.StatusNotFound, payment.CodeNotFound)
		}
	}
	// Another merchant cannot read the log nor redeliver.
	wantError(t, f.do(t, "GET", "/webhooks/"+hook+"/events", server(f.b1), nil), http.StatusNotFound, payment.CodeNotFound)
	wantError(t, f.do(t, "POST", "/webhooks/"+hook+"/events/"+event+"/redeliver", server(f.b1), nil), http.StatusNotFound, payment.CodeNotFound)
}

// TestWebhookLogPages: the log pages newest first by default, with the
// last line's id (the event's) as the cursor, both ways.
func TestWebhookLogPages(t *testing.T) {
	sender := &fakeSender{status: 204}
	f := newPayFixture(t, payOptions{events: true, webhookSender: sender})
	a1 := server(f.a1)
	pA1 := f.hooksPath(f.storeA1.String())
	hook := jstr(f.createHook(t, pA1, a1, hookBody(hookURL, "triggers", []string{"token_created"})), "id")
	var tokens []string
	for range 5 {
		tokens = append(tokens, f.token(t, "4000020000000000"))
		f.clock.Advance(time.Second)
	}
	f.drain(t)
	logPath := pA1 + "/" + hook + "/events"
	dataIDs := func(m map[string]any) []string {
		var out []string
		for _, it := range m["items"].([]any) {
			out = append(out, jstr(it.(map[string]any), "data.id"))
		}
		return out
	}
	first := ok(t, f.do(t, "GET", logPath+"?limit=2", a1, nil), http.StatusOK)
	if got := dataIDs(first); !slices.Equal(got, []string{tokens[4], tokens[3]}) || first["has_more"] != true {
		t.Fatalf("first page %v (has_more %v), want tokens 4, 3", got, first["has_more"])
	}
	ids := listIDs(t, first)
	second := ok(t, f.do(t, "GET", logPath+"?limit=2&cursor="+ids[1], a1, nil), http.StatusOK)
	if got := dataIDs(second); !slices.Equal(got, []string{tokens[2], tokens[1]}) {
		t.Errorf("second page %v, want tokens 2, 1", got)
	}
	asc := ok(t, f.do(t, "GET", logPath+"?limit=2&cursor_direction=asc&cursor="+ids[1], a1, nil), http.StatusOK)
	if got := dataIDs(asc); !slices.Equal(got, []string{tokens[4]}) || asc["has_more"] != false {
		t.Errorf("ascending after token 3: %v (has_more %v), want token 4", got, asc["has_more"])
	}
	for _, line := range first["items"].([]any) {
		if l := line.(map[string]any); jget(l, "successful") != true || jstr(l, "event") != "token_created" {
			t.Errorf("line %v", l)
		}
	}
}
