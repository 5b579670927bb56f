package payment

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// WebhookRequest is one delivery attempt as it goes out: a POST of Body to
// URL with Headers. Live says whether the receiver must be a public
// address (live mode refuses loopback, private and link-local ones).
type WebhookRequest struct {
	URL     string
	Headers map[string]string
	Body    []byte
	Live    bool
}

// WebhookSender sends one delivery attempt and returns the receiver's
// HTTP status, or an error when no answer came (refused address, timeout,
// connection reset). The HTTP implementation is package webhookhttp.
type WebhookSender interface {
	Send(ctx context.Context, req WebhookRequest) (status int, err error)
	// CheckURL says, when a webhook is registered or its URL changed,
	// whether deliveries of its mode could go there: an error that is
	// ErrWebhookAddress when the URL's host is, or now resolves to, an
	// address they may never reach. A name that does not resolve now is
	// no error: the sender checks the address again at every connection,
	// which is what keeps a name re-bound later (DNS rebinding) out.
	CheckURL(ctx context.Context, rawURL string, live bool) error
}

// ErrWebhookAddress is the error (errors.Is) of a webhook URL or a
// delivery attempt refused for the address it names or reaches.
var ErrWebhookAddress = errors.New("an address webhooks may not reach")

// ErrWebhookTimeout is the error (errors.Is) of a delivery attempt that
// got no answer in time.
var ErrWebhookTimeout = errors.New("no answer in time")

// WebhookBody is what a delivery posts: {"id","event","data","created_on"}.
func WebhookBody(ev *Event) ([]byte, error) {
	return json.Marshal(struct {
		ID        uuid.UUID       `json:"id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
		CreatedOn string          `json:"created_on"`
	}{ev.ID, ev.Name, ev.Data, ev.CreatedOn.UTC().Format(time.RFC3339Nano)})
}

// SignWebhook is the Standard Webhooks signature of a message: "v1," and
// the base64 HMAC-SHA256, under the secret's key (whsec_ and base64), of
// id.timestamp.body.
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return "", fmt.Errorf("webhook signing secret: %w", err)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(timestamp, 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil)), nil
}

// DeliveryLogEntry is one line of a webhook's delivery log.
type DeliveryLogEntry struct {
	Delivery *Delivery
	Event    *Event
}
