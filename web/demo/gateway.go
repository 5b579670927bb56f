package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// gatewayCharge is the part of the gateway's charge the shop checks.
type gatewayCharge struct {
	ID                 string         `json:"id"`
	StoreID            string         `json:"store_id"`
	TransactionTokenID string         `json:"transaction_token_id"`
	SubscriptionID     *string        `json:"subscription_id"`
	RequestedAmount    int64          `json:"requested_amount"`
	RequestedCurrency  string         `json:"requested_currency"`
	Status             string         `json:"status"`
	Mode               string         `json:"mode"`
	Metadata           map[string]any `json:"metadata"`
	// CaptureAt is a konbini or bank-transfer charge's payment deadline.
	CaptureAt *time.Time `json:"capture_at"`
	// Error says why a charge failed (its code only).
	Error *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func (c *gatewayCharge) mismatch(storeID string, amount int64, currency, ref string) string {
	switch {
	case !strings.EqualFold(c.StoreID, storeID):
		return "the charge belongs to another store"
	case c.SubscriptionID != nil && *c.SubscriptionID != "":
		return "the charge is a subscription's"
	case c.RequestedAmount != amount:
		return fmt.Sprintf("the charge is for %d, the cart totals %d", c.RequestedAmount, amount)
	case !strings.EqualFold(c.RequestedCurrency, currency):
		return "the charge's currency is " + c.RequestedCurrency
	case metadataString(c.Metadata, metaOrderID) != ref:
		return "the charge is for another order"
	}
	return ""
}

// errChargeUnknown is the gateway's 404: no such charge in the shop's store.
var errChargeUnknown = errors.New("the gateway knows no such charge in this store")

// fetchCharge asks the gateway about a charge, as a merchant's server
// does: with the secret-bearing token, waiting a little while it is still
// being processed.
func (d *shop) fetchCharge(ctx context.Context, id string) (*gatewayCharge, error) {
	u := d.cfg.GatewayURL + "/stores/" + url.PathEscape(d.cfg.StoreID) + "/charges/" + url.PathEscape(id) + "?polling=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+d.cfg.Secret+"."+d.cfg.JWT)
	req.Header.Set("Accept", "application/json")
	res, err := d.client.Do(req)
	if err != nil {
		return nil, errors.New("the gateway could not be reached")
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	if err != nil {
		return nil, errors.New("the gateway's answer was cut short")
	}
	if res.StatusCode == http.StatusNotFound {
		return nil, errChargeUnknown
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Code string `json:"code"`
		}
		_ = json.Unmarshal(body, &e)
		return nil, fmt.Errorf("the gateway answered %d %s", res.StatusCode, e.Code)
	}
	var ch gatewayCharge
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&ch); err != nil {
		return nil, errors.New("the gateway's answer is not a charge")
	}
	if !strings.EqualFold(ch.ID, id) {
		return nil, errors.New("the gateway answered with another charge")
	}
	return &ch, nil
}

// metadataString reads a metadata value as the text it was given as.
func metadataString(m map[string]any, key string) string {
	switch v := m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case json.Number:
		return v.String()
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}
