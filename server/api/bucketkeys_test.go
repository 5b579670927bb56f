package api

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/limit"
	"github.com/kessai/kessai/server/payment"
)

// recordingLimiter admits everything and keeps the buckets it was asked
// about.
type recordingLimiter struct{ got []limit.Bucket }

func (l *recordingLimiter) Admit(_ context.Context, buckets []limit.Bucket) (limit.Result, error) {
	l.got = append([]limit.Bucket(nil), buckets...)
	return limit.NewMemory(limit.MemoryConfig{}).Admit(context.Background(), buckets)
}

// TestBucketKeys pins the keys of the buckets a request counts against
// (README, "Who is counted"), built without a string concatenation per
// part: subject, then | and the route template or the exact path with its
// raw query. The same keys mean the same buckets, here and in a shared
// store.
func TestBucketKeys(t *testing.T) {
	ctx := context.Background()
	st := servicetest.New(t, servicetest.Options{})
	demo := st.SeedDemo(t, "shop.example")
	merchant, err := st.Service.Access.IssueMerchantAppToken(ctx, demo.MerchantID, payment.NewAppToken{Mode: payment.ModeTest})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recordingLimiter{}
	srv := New(Config{Service: st.Service, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		RateLimits: RateLimits{Limiter: rec, Rules: limit.DefaultRules()}})
	storeID, merchantID := demo.StoreID.String(), demo.MerchantID.String()
	const path = "/stores/0196c5a0-2a4f-7c1e-9d3b-5f6a7b8c9d0e/charges/0196C5A0-2A4F-7C1E-9D3B-5F6A7B8C9D0F/refunds"
	const route = "/stores/{id}/charges/{id}/refunds"
	for _, c := range []struct {
		name, method, target, auth, origin string
		want                               []string
	}{
		{"secret store token", "GET", path + "?limit=2&cursor=x%20y", demo.Auth, "",
			[]string{"store:" + storeID + "/mode:test|" + route, "store:" + storeID + "/mode:test|" + path + "?limit=2&cursor=x%20y"}},
		{"browser token", "GET", path, "Bearer " + demo.Token.JWT, "https://shop.example",
			[]string{"store:" + storeID + "/ip:192.0.2.1/mode:test|" + route, "store:" + storeID + "/ip:192.0.2.1/mode:test|" + path}},
		{"merchant token", "GET", "/charges", "Bearer " + merchant.Secret + "." + merchant.JWT, "",
			[]string{"merchant:" + merchantID + "/mode:test|/charges", "merchant:" + merchantID + "/mode:test|/charges"}},
		{"no token", "GET", "/nowhere/abc1/x?q", "", "",
			[]string{"ip:192.0.2.1|/nowhere/{id}/x", "ip:192.0.2.1|/nowhere/abc1/x?q"}},
		{"bad token", "GET", "/me", "Bearer nonsense", "", []string{"ip:192.0.2.1|/me", "ip:192.0.2.1|/me"}},
		{"charge class", "POST", "/charges", demo.Auth, "", []string{"store:" + storeID + "/mode:test"}},
		{"charge class, browser", "POST", "/tokens", "Bearer " + demo.Token.JWT, "https://shop.example",
			[]string{"store:" + storeID + "/ip:192.0.2.1/mode:test"}},
		{"charge class, no token", "POST", "/subscriptions", "", "", []string{"ip:192.0.2.1"}},
		// The route key collapses the decoded path; the exact key keeps it
		// as sent.
		{"escaped path", "GET", "/stores/a%2Fb1/charges", demo.Auth, "",
			[]string{"store:" + storeID + "/mode:test|/stores/a/{id}/charges", "store:" + storeID + "/mode:test|/stores/a%2Fb1/charges"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec.got = nil
			r := httptest.NewRequest(c.method, c.target, strings.NewReader("{}"))
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			}
			if c.origin != "" {
				r.Header.Set("Origin", c.origin)
			}
			srv.ServeHTTP(httptest.NewRecorder(), r)
			if len(rec.got) != len(c.want) {
				t.Fatalf("%d buckets %v, want %d", len(rec.got), rec.got, len(c.want))
			}
			kinds := []limit.Kind{limit.KindRoute, limit.KindExact}
			if len(c.want) == 1 {
				kinds = []limit.Kind{limit.KindCharge}
			}
			for i, b := range rec.got {
				if b.Key != c.want[i] || b.Kind != kinds[i] {
					t.Errorf("bucket %d: %v %q, want %v %q", i, b.Kind, b.Key, kinds[i], c.want[i])
				}
			}
		})
	}
}

// TestAppendUUID: ids in keys are written as uuid.UUID.String writes them.
func TestAppendUUID(t *testing.T) {
	for _, id := range []uuid.UUID{uuid.Nil, uuid.Max, uuid.New(), uuid.New(), payment.NewID()} {
		if got := string(appendUUID([]byte("x"), id)); got != "x"+id.String() {
			t.Errorf("appendUUID(%s) = %s", id, got)
		}
	}
}

// TestCollapsePath: every segment holding a digit is {id}, the others and
// the slashes stay as they are.
func TestCollapsePath(t *testing.T) {
	for path, want := range map[string]string{
		"": "", "/": "/", "//": "//", "/charges": "/charges", "/charges/": "/charges/",
		"/charges/1": "/charges/{id}", "/a1/b/c2/": "/{id}/b/{id}/", "x9": "{id}", "/stores/ab/9/charges": "/stores/ab/{id}/charges",
	} {
		if got := collapsePath(path); got != want {
			t.Errorf("collapsePath(%q) = %q, want %q", path, got, want)
		}
	}
}

// TestRateHeaderValues: the headers carry the numbers as strconv writes
// them, one value each, for small and large numbers alike.
func TestRateHeaderValues(t *testing.T) {
	rules := limit.Rules{Charge: limit.Rule{Burst: 7, BurstRefillPerMinute: 1, PerMinute: 3000},
		Route: limit.Rule{Burst: 100_000_000, BurstRefillPerMinute: 1, PerMinute: 100_000_000},
		Exact: limit.Rule{Burst: 1, BurstRefillPerMinute: 1, PerMinute: 120}}
	l := limit.NewMemory(limit.MemoryConfig{})
	res, err := l.Admit(context.Background(), []limit.Bucket{{Kind: limit.KindRoute, Key: "r", Rule: rules.Route}, {Kind: limit.KindExact, Key: "e", Rule: rules.Exact}})
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	writeRateHeaders(h, false, &res, rules)
	want := http.Header{}
	want.Set(headerRemainingRoute, "99999999")
	want.Set(headerPerMinuteRoute, "100000000")
	want.Set(headerRemainingExact, "0")
	want.Set(headerPerMinuteExact, "120")
	if !equalHeaders(h, want) {
		t.Errorf("standard: %v, want %v", h, want)
	}
	res, err = l.Admit(context.Background(), []limit.Bucket{{Kind: limit.KindCharge, Key: "c", Rule: rules.Charge}})
	if err != nil {
		t.Fatal(err)
	}
	h = http.Header{}
	writeRateHeaders(h, true, &res, rules)
	want = http.Header{}
	want.Set(headerRemaining, "6")
	want.Set(headerPerMinute, "3000")
	if !equalHeaders(h, want) {
		t.Errorf("charge: %v, want %v", h, want)
	}
	// A bucket missing from the result (a limiter that failed) shows 0.
	h = http.Header{}
	writeRateHeaders(h, true, &limit.Result{}, rules)
	if h.Get(headerRemaining) != "0" || h.Get(headerPerMinute) != "3000" || len(h) != 2 {
		t.Errorf("empty result: %v", h)
	}
}

func equalHeaders(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if len(v) != 1 || len(b[k]) != 1 || v[0] != b[k][0] {
			return false
		}
	}
	return true
}
