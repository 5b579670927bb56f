package gatewaytest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// HookSink is a merchant's webhook receiver in the test process. While
// held (SetHold), it keeps each request it gets unanswered until released
// (or the gateway is gone).
type HookSink struct {
	*httptest.Server
	mu   sync.Mutex
	got  []Sunk
	hold bool
	// Arrived gets a value for each request, as it arrives.
	Arrived chan struct{}
	release chan struct{}
}

// Sunk is one request a HookSink got.
type Sunk struct {
	Header http.Header
	Body   []byte
	// Answered is false for a request the sink held.
	Answered bool
}

// NewHookSink starts a sink, closed when the test ends.
func NewHookSink(t *testing.T) *HookSink {
	s := &HookSink{Arrived: make(chan struct{}, 100), release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		hold := s.hold
		s.got = append(s.got, Sunk{Header: r.Header.Clone(), Body: body, Answered: !hold})
		s.mu.Unlock()
		s.Arrived <- struct{}{}
		if hold {
			select {
			case <-s.release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() {
		close(s.release)
		s.Close()
	})
	return s
}

// Requests are what the sink got so far, in order.
func (s *HookSink) Requests() []Sunk {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Sunk(nil), s.got...)
}

// SetHold says whether the requests to come are held unanswered.
func (s *HookSink) SetHold(hold bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = hold
}

// CreateWebhook makes a store webhook through the API and returns its id
// and signing secret.
func CreateWebhook(c *Client, url, authToken string, triggers ...string) (id, secret string) {
	c.T.Helper()
	var w struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	c.Must(http.MethodPost, "/stores/"+c.Store+"/webhooks", map[string]any{
		"triggers": triggers, "url": url, "auth_token": authToken,
	}, &w, http.StatusCreated)
	if w.ID == "" || !strings.HasPrefix(w.Secret, "whsec_") {
		c.T.Fatalf("created webhook %+v", w)
	}
	return w.ID, w.Secret
}
