package api_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/payment"
)

// TestMerchantPrefixedRoutes: the /merchants/{merchantId}/stores/{storeId}
// forms UnivaPay documents (the Ruby SDK's list_subscription_charges, the
// docs' webhook pages) answer as their store-prefixed forms do when the
// merchant is the caller's own, and NOT_FOUND, with nothing of the object
// and nothing changed, for any other merchant id.
func TestMerchantPrefixedRoutes(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	a1, b1 := server(f.a1), server(f.b1)
	sub := jstr(f.createSub(t), "id")
	f.process(t)
	store := f.storeA1.String()
	hook := jstr(f.createHook(t, f.hooksPath(store), a1, hookBody(hookURL)), "id")
	own := "/merchants/" + f.merchantA.String()
	others := map[string]string{
		"another merchant's id": "/merchants/" + f.merchantB.String(),
		"an unknown id":         "/merchants/" + payment.NewID().String(),
		"the nil id":            "/merchants/00000000-0000-0000-0000-000000000000",
		"not an id":             "/merchants/merchant-a",
	}
	// secrets are what no refused answer may show.
	secrets := []string{sub, hook, store, f.merchantA.String()}

	cases := []struct {
		name   string
		method string
		rest   string // after /stores/{storeId}
		body   any
		status int
	}{
		{"subscription's charges", "GET", "/subscriptions/" + sub + "/charges", nil, http.StatusOK},
		{"webhooks", "GET", "/webhooks", nil, http.StatusOK},
		{"webhook", "GET", "/webhooks/" + hook, nil, http.StatusOK},
		{"webhook change", "PATCH", "/webhooks/" + hook, map[string]any{"active": false}, http.StatusOK},
		{"webhook creation", "POST", "/webhooks", hookBody(hookURL + "/created"), http.StatusCreated},
		{"webhook deletion", "DELETE", "/webhooks/" + hook, nil, http.StatusNoContent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			storeForm := "/stores/" + store + c.rest
			for name, prefix := range others {
				rec := f.do(t, c.method, prefix+storeForm, a1, c.body)
				wantError(t, rec, http.StatusNotFound, payment.CodeNotFound)
				for _, s := range secrets {
					if strings.Contains(rec.Body.String(), s) {
						t.Errorf("%s %s (%s) answered %s, which shows %s", c.method, prefix+storeForm, name, rec.Body, s)
					}
				}
			}
			// Another merchant's own credential, with its own merchant id,
			// on this merchant's store: the store is not its.
			wantError(t, f.do(t, c.method, "/merchants/"+f.merchantB.String()+storeForm, b1, c.body), http.StatusNotFound, payment.CodeNotFound)
			// Nothing was done by the refused requests.
			if got := ok(t, f.do(t, "GET", f.hooksPath(store)+"/"+hook, a1, nil), http.StatusOK); got["active"] != true {
				t.Fatalf("the webhook after refused requests: %v", got)
			}
			if page := ok(t, f.do(t, "GET", f.hooksPath(store), a1, nil), http.StatusOK); len(page["items"].([]any)) != 1 {
				t.Fatalf("webhooks after refused requests: %v", page)
			}

			var want map[string]any
			if c.method == "GET" {
				want = ok(t, f.do(t, "GET", storeForm, a1, nil), c.status)
			}
			rec := f.do(t, c.method, own+storeForm, a1, c.body)
			if rec.Code != c.status {
				t.Fatalf("%s %s: %d %s, want %d", c.method, own+storeForm, rec.Code, rec.Body, c.status)
			}
			if want != nil && !sameJSON(body(t, rec), want) {
				t.Errorf("%s %s answered %s, want what %s answers: %v", c.method, own+storeForm, rec.Body, storeForm, want)
			}
			if c.method == "GET" {
				// A merchant token reaches its stores through the prefix too.
				ok(t, f.do(t, "GET", own+storeForm, server(f.merchA), nil), c.status)
			}
			if c.method == "PATCH" {
				// Put back what the other cases check.
				ok(t, f.do(t, "PATCH", storeForm, a1, map[string]any{"active": true}), http.StatusOK)
			}
			if c.method == "POST" {
				wantNoContent(t, f.do(t, "DELETE", storeForm+"/"+jstr(body(t, rec), "id"), a1, nil))
			}
		})
	}
}

// TestRubySDKOperations: every operation of UnivaPay's Ruby SDK
// (testdata/ruby-sdk-operations.txt) reaches one of Kessai's routes, which
// answers a request without credentials 401; those marked not served reach
// none (404, 405), so that the list stays true when Kessai grows.
func TestRubySDKOperations(t *testing.T) {
	f := newPayFixture(t, payOptions{})
	raw, err := os.ReadFile(filepath.Join("testdata", "ruby-sdk-operations.txt"))
	if err != nil {
		t.Fatal(err)
	}
	variable := regexp.MustCompile(`\{[A-Za-z]+\}`)
	served, refused := 0, 0
	for n, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, note, _ := strings.Cut(line, "#")
		fields := strings.Fields(op)
		if len(fields) != 3 {
			t.Fatalf("line %d: %q is not METHOD PATH NAME", n+1, line)
		}
		method, path := fields[0], variable.ReplaceAllString(fields[1], payment.NewID().String())
		rec := f.do(t, method, path, "", nil)
		if strings.Contains(note, "not served") {
			refused++
			if rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
				t.Errorf("%s (%s %s) is listed as not served, but answered %d %s", fields[2], method, fields[1], rec.Code, rec.Body)
			}
			continue
		}
		served++
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s (%s %s): %d %s, want 401 from the route that serves it", fields[2], method, fields[1], rec.Code, rec.Body)
		}
	}
	if served+refused != 74 {
		t.Errorf("read %d operations, want the SDK's 74", served+refused)
	}
	t.Logf("%d of the Ruby SDK's operations served, %d not", served, refused)
}
