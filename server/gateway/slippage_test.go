package gateway_test

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/gateway/gatewaytest"
)

// TestGatewaySlipPage: the gateway routes the issuer token of an awaiting
// bank transfer to the sandbox's instructions page, which shows the
// account, and the page's deposit form reaches the charging service
// through the gateway's wiring: the deposit pays the charge, as the API
// then says.
func TestGatewaySlipPage(t *testing.T) {
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := &gatewaytest.Client{T: t, Base: g.URL, Auth: g.Auth, Store: g.StoreID}
	var tok struct {
		ID   string `json:"id"`
		Data struct {
			AccountNumber string `json:"account_number"`
		} `json:"data"`
	}
	c.Must(http.MethodPost, "/tokens", map[string]any{"payment_type": "bank_transfer", "type": "one_time",
		"email": "shopper@example.com", "data": map[string]any{"brand": "bank_test_brand"}}, &tok, http.StatusCreated)
	var ch struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	c.Must(http.MethodPost, "/charges", map[string]any{"transaction_token_id": tok.ID, "amount": 4200, "currency": "JPY"}, &ch, http.StatusCreated)
	path := "/stores/" + g.StoreID + "/charges/" + ch.ID
	for deadline := time.Now().Add(10 * time.Second); ch.Status != "awaiting"; {
		if time.Now().After(deadline) {
			t.Fatalf("the charge is %s, want awaiting", ch.Status)
		}
		time.Sleep(20 * time.Millisecond)
		c.Get(path, &ch)
	}
	var it struct {
		IssuerToken string `json:"issuer_token"`
	}
	c.Get(path+"/issuer_token", &it)
	if !strings.HasPrefix(it.IssuerToken, g.URL+"/sandbox/pay/") {
		t.Fatalf("issuer token %q", it.IssuerToken)
	}

	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer client.CloseIdleConnections()
	res, err := client.Get(it.IssuerToken + "?locale=ja")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	page := html.UnescapeString(string(body))
	for _, want := range []string{"テスト銀行", "本店", tok.Data.AccountNumber, "¥4,200", "未入金", `value="deposit"`} {
		if res.StatusCode != http.StatusOK || !strings.Contains(page, want) {
			t.Fatalf("the page (%d) lacks %q:\n%s", res.StatusCode, want, page)
		}
	}
	csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if csrf == nil {
		t.Fatal("no CSRF token on the page")
	}
	form := url.Values{"csrf": {csrf[1]}, "action": {"deposit"}, "amount": {"4200"}, "locale": {"ja"}}
	req, err := http.NewRequest(http.MethodPost, it.IssuerToken+"/act", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "null")
	res, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "?locale=ja") {
		t.Fatalf("deposit: %d to %q, want 303 back to the page", res.StatusCode, res.Header.Get("Location"))
	}
	for deadline := time.Now().Add(10 * time.Second); ch.Status != "successful"; {
		if time.Now().After(deadline) {
			t.Fatalf("after the page's deposit the charge is %s, want successful", ch.Status)
		}
		c.Get(path, &ch)
		time.Sleep(20 * time.Millisecond)
	}
}
