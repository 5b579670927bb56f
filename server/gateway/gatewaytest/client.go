package gatewaytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
)

// Client speaks the API with an app token's secret, failing its test
// where a method says so.
type Client struct {
	T     *testing.T
	Base  string // the gateway's URL
	Auth  string // "Bearer {secret}.{jwt}"
	Store string // the token's store id
}

var clientHTTP = &http.Client{Timeout: 10 * time.Second}

// Do sends one request; err is a transport error (no answer).
func (c *Client) Do(method, path string, body, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", c.Auth)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := clientHTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return 0, err
	}
	if res.StatusCode >= 300 {
		c.T.Logf("%s %s → %d %s", method, path, res.StatusCode, b)
		return res.StatusCode, nil
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			return res.StatusCode, fmt.Errorf("%s %s: %w: %s", method, path, err, b)
		}
	}
	return res.StatusCode, nil
}

func (c *Client) Must(method, path string, body, out any, want int) {
	c.T.Helper()
	status, err := c.Do(method, path, body, out)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		c.T.Fatalf("%s %s: status %d, want %d", method, path, status, want)
	}
}

func (c *Client) Get(path string, out any) {
	c.T.Helper()
	c.Must(http.MethodGet, path, nil, out, http.StatusOK)
}

func (c *Client) Token(card string) string {
	c.T.Helper()
	id, err := c.TryToken(card)
	if err != nil || id == "" {
		c.T.Fatalf("POST /tokens: %q, %v", id, err)
	}
	return id
}

// TryToken makes a one-time card token; "" without an error means the
// gateway refused it.
func (c *Client) TryToken(card string) (string, error) {
	var tok struct {
		ID string `json:"id"`
	}
	status, err := c.Do(http.MethodPost, "/tokens", map[string]any{
		"payment_type": "card",
		"type":         "one_time",
		"email":        "crash@example.com",
		"data": map[string]any{
			"cardholder": "TARO YAMADA", "card_number": card,
			"exp_month": 12, "exp_year": time.Now().Year() + 3, "cvv": "123",
		},
	}, &tok)
	if err != nil || status != http.StatusCreated {
		return "", err
	}
	return tok.ID, nil
}

func (c *Client) TryCharge(token string, capture bool, amount int) (string, int, error) {
	var ch struct {
		ID string `json:"id"`
	}
	status, err := c.Do(http.MethodPost, "/charges", map[string]any{
		"transaction_token_id": token, "amount": amount, "currency": "JPY", "capture": capture,
	}, &ch)
	return ch.ID, status, err
}

func (c *Client) Charge(token string, capture bool, amount int) (string, int) {
	c.T.Helper()
	id, status, err := c.TryCharge(token, capture, amount)
	if err != nil {
		c.T.Fatal(err)
	}
	return id, status
}

func (c *Client) Refund(chargeID string, amount int) (string, int) {
	c.T.Helper()
	var rf struct {
		ID string `json:"id"`
	}
	status, err := c.Do(http.MethodPost, "/stores/"+c.Store+"/charges/"+chargeID+"/refunds",
		map[string]any{"amount": amount, "currency": "JPY", "reason": "customer_request"}, &rf)
	if err != nil {
		c.T.Fatal(err)
	}
	return rf.ID, status
}

// PendingCharges counts the store's pending charges.
func (c *Client) PendingCharges() int {
	c.T.Helper()
	n := 0
	c.ListAll("/stores/"+c.Store+"/charges?status=pending", func(json.RawMessage) { n++ })
	return n
}

// WaitCharge long-polls a charge until it is final (or, for an auth-only
// charge, authorized and not being captured), and fails the test if it is
// not within timeout.
func (c *Client) WaitCharge(id string, timeout time.Duration, want string) string {
	c.T.Helper()
	var status string
	kessaitest.WaitFor(c.T, timeout, "charge "+id+" to end "+want, func() bool {
		var ch struct {
			Status string `json:"status"`
		}
		c.Get("/stores/"+c.Store+"/charges/"+id+"?polling=true", &ch)
		status = ch.Status
		switch status {
		case "successful", "failed", "error", "canceled":
			return true
		}
		return status == "authorized" && want == "authorized"
	})
	return status
}

// WaitRefund long-polls a refund until it is no longer pending, and fails
// the test if it still is after timeout.
func (c *Client) WaitRefund(chargeID, id string, timeout time.Duration) string {
	c.T.Helper()
	var status string
	kessaitest.WaitFor(c.T, timeout, "refund "+id+" to finish", func() bool {
		var rf struct {
			Status string `json:"status"`
		}
		c.Get("/stores/"+c.Store+"/charges/"+chargeID+"/refunds/"+id+"?polling=true", &rf)
		status = rf.Status
		return status != "pending"
	})
	return status
}

// ListAll walks every page of a list, newest first.
func (c *Client) ListAll(path string, each func(json.RawMessage)) {
	c.T.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	cursor := ""
	for range 1000 {
		var page struct {
			Items   []json.RawMessage `json:"items"`
			HasMore *bool             `json:"has_more"`
		}
		p := path + sep + "limit=100"
		if cursor != "" {
			p += "&cursor=" + cursor
		}
		c.Get(p, &page)
		if page.HasMore == nil {
			c.T.Fatalf("GET %s: no has_more", p)
		}
		for _, raw := range page.Items {
			each(raw)
		}
		if !*page.HasMore || len(page.Items) == 0 {
			return
		}
		var last struct {
			ID string `json:"id"`
		}
		MustUnmarshal(c.T, page.Items[len(page.Items)-1], &last)
		cursor = last.ID
	}
	c.T.Fatalf("GET %s: too many pages", path)
}

// LedgerLine is a line of the transaction history.
type LedgerLine struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	ChargeID string `json:"charge_id"`
}

// Ledger reads the whole transaction history by id, failing the test for
// a line listed twice or still pending.
func (c *Client) Ledger() map[string]LedgerLine {
	lines := map[string]LedgerLine{}
	c.ListAll("/transaction_history", func(raw json.RawMessage) {
		var l LedgerLine
		MustUnmarshal(c.T, raw, &l)
		if _, dup := lines[l.ID]; dup {
			c.T.Errorf("ledger lists %s %s twice", l.Type, l.ID)
		}
		lines[l.ID] = l
		if l.Status == "pending" {
			c.T.Errorf("ledger line %s %s is still pending", l.Type, l.ID)
		}
	})
	return lines
}

// TokenOf makes a card token of a kind (one_time, recurring).
func (c *Client) TokenOf(kind, card string) string {
	c.T.Helper()
	var tok struct {
		ID string `json:"id"`
	}
	c.Must(http.MethodPost, "/tokens", map[string]any{
		"payment_type": "card", "type": kind, "email": "crash@example.com",
		"data": map[string]any{
			"cardholder": "TARO YAMADA", "card_number": card,
			"exp_month": 12, "exp_year": time.Now().Year() + 3, "cvv": "123",
		},
	}, &tok, http.StatusCreated)
	return tok.ID
}

// KeyedCharge charges a token with an Idempotency-Key; err is a transport
// error (no answer).
func (c *Client) KeyedCharge(key, token string, amount int) (status int, idemStatus, id string, err error) {
	b, err := json.Marshal(map[string]any{"transaction_token_id": token, "amount": amount, "currency": "JPY"})
	if err != nil {
		return 0, "", "", err
	}
	req, err := http.NewRequest(http.MethodPost, c.Base+"/charges", bytes.NewReader(b))
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", c.Auth)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	res, err := clientHTTP.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer res.Body.Close()
	var ch struct {
		ID string `json:"id"`
	}
	raw, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode == http.StatusCreated {
		err = json.Unmarshal(raw, &ch)
	}
	if res.StatusCode != http.StatusCreated {
		c.T.Logf("POST /charges (key %s) → %d %s", key, res.StatusCode, raw)
	}
	return res.StatusCode, res.Header.Get("Idempotency-Status"), ch.ID, err
}

// longHTTP outlasts the longest poll a scale-out case sets (Send).
var longHTTP = &http.Client{Timeout: 40 * time.Second}

// Send is one request whose answer, whatever its status, is returned raw.
func (c *Client) Send(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.Base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", c.Auth)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := longHTTP.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

// SendOK sends and fails the test on a transport error.
func (c *Client) SendOK(method, path string, body any) (int, []byte) {
	c.T.Helper()
	status, b, err := c.Send(method, path, body)
	if err != nil {
		c.T.Fatalf("%s %s: %v", method, path, err)
	}
	return status, b
}

// MustUnmarshal decodes raw into v or fails the test.
func MustUnmarshal(t *testing.T, raw []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}
