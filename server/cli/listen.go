package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/payment"
)

// `kessai listen` and `kessai trigger`: a developer's webhooks without a
// public address. listen reads the gateway's event stream (GET
// /events/stream) over one outgoing HTTP response and posts each event to
// a local URL as a webhook delivery would, signed with a secret of its
// own; trigger makes the sandbox produce an event through the public API.

// defaultGateway is where listen and trigger find the gateway.
const defaultGateway = "http://127.0.0.1:8080"

// Timing of listen.
const (
	// listenForwardTimeout is how long the local receiver has to answer,
	// as a real receiver has (the delivery timeout).
	listenForwardTimeout = 15 * time.Second
	// listenIdleTimeout ends a connection that brought nothing, not even
	// the heartbeat the gateway sends every 15 s: it is dead, though no
	// error said so.
	listenIdleTimeout = 45 * time.Second
	// listenMaxBackoff is the longest wait between reconnections.
	listenMaxBackoff = 10 * time.Second
	// listenMaxEvent bounds one event of the stream.
	listenMaxEvent = 8 << 20
)

// apiFlags are the flags listen and trigger share.
type apiFlags struct {
	gateway string
	token   string
}

func (a *apiFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.gateway, "gateway", defaultGateway, "the gateway's base URL")
	fs.StringVar(&a.token, "token", "", "the app token as SECRET.JWT (default $KESSAI_APP_TOKEN, else the demo store's from $KESSAI_DATA_DIR/"+gateway.CredentialsFile+")")
}

// client checks the flags and returns the gateway's API client.
func (a *apiFlags) client() (*apiClient, error) {
	u, err := url.Parse(a.gateway)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--gateway %q is not an http(s) URL", a.gateway)
	}
	token := a.token
	if token == "" {
		token = os.Getenv("KESSAI_APP_TOKEN")
	}
	if token == "" {
		dir := os.Getenv("KESSAI_DATA_DIR")
		if dir == "" {
			dir = "./data"
		}
		if c, err := gateway.ReadCredentials(filepath.Join(dir, gateway.CredentialsFile)); err == nil && c.Secret != "" && c.JWT != "" {
			token = c.Secret + "." + c.JWT
		}
	}
	token = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(token), "Bearer "))
	if token == "" {
		return nil, errors.New("no app token: pass --token SECRET.JWT or set KESSAI_APP_TOKEN")
	}
	if strings.Count(token, ".") != 3 {
		return nil, errors.New("the app token must be SECRET.JWT: the event stream and the API calls need the token's secret")
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	return &apiClient{base: strings.TrimRight(a.gateway, "/"), auth: "Bearer " + token, http: &http.Client{Transport: transport}}, nil
}

// apiClient calls the gateway's API with an app token.
type apiClient struct {
	base string
	auth string
	http *http.Client
}

// apiError is an error answer of the gateway.
type apiError struct {
	Status int
	Code   string
	Fields []string
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("the gateway answered %d %s", e.Status, e.Code)
	if len(e.Fields) > 0 {
		s += " (" + strings.Join(e.Fields, ", ") + ")"
	}
	return s
}

// close lets the client's idle connections go.
func (c *apiClient) close() { c.http.CloseIdleConnections() }

// readAPIError reads an error envelope, or says what came instead.
func readAPIError(resp *http.Response) *apiError {
	e := &apiError{Status: resp.StatusCode, Code: http.StatusText(resp.StatusCode)}
	var env struct {
		Code   string `json:"code"`
		Errors []struct {
			Field  string `json:"field"`
			Reason string `json:"reason"`
		} `json:"errors"`
	}
	if json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&env) == nil && env.Code != "" {
		e.Code = env.Code
		for _, f := range env.Errors {
			e.Fields = append(e.Fields, strings.TrimPrefix(f.Field+" ", " ")+f.Reason)
		}
	}
	return e
}

// call sends a request with a JSON body (nil: none) and decodes a JSON
// answer of status want into a map.
func (c *apiClient) call(ctx context.Context, method, path string, body any, want int) (map[string]any, error) {
	var rb io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rb = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rb)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return nil, readAPIError(resp)
	}
	out := map[string]any{}
	if want == http.StatusNoContent {
		return out, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	return out, nil
}

// listener is a running `kessai listen`.
type listener struct {
	api       *apiClient
	forwardTo string
	secret    string
	authToken string
	out       io.Writer
	forward   *http.Client
	// lastID is the last event received: a reconnection resumes after it.
	lastID    string
	connected bool
}

// newWebhookSecret is a signing secret as Standard Webhooks writes it.
func newWebhookSecret() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

// Listen is `kessai listen`: it forwards the gateway's events to a local
// URL until ctx ends, reconnecting after a dropped connection.
func Listen(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	var a apiFlags
	a.register(fs)
	forwardTo := fs.String("forward-to", "", "the local URL events are posted to (required)")
	secret := fs.String("secret", "", "the whsec_… secret forwarded events are signed with (default: a new one, printed)")
	authToken := fs.String("auth-token", "", "sent as each forwarded event's Authorization header, as a webhook's auth_token is")
	after := fs.String("after", "", "replay the events after this event id first")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("listen takes no arguments, got %q", fs.Args())
	}
	if u, err := url.Parse(*forwardTo); *forwardTo == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("--forward-to must be an http(s) URL, such as http://localhost:3000/webhooks")
	}
	client, err := a.client()
	if err != nil {
		return err
	}
	defer client.close()
	l := &listener{
		api: client, forwardTo: *forwardTo, secret: *secret, authToken: *authToken, out: out,
		forward: &http.Client{
			Timeout: listenForwardTimeout, Transport: http.DefaultTransport.(*http.Transport).Clone(),
			// As a delivery: a redirect is the receiver's answer.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		lastID: strings.TrimSpace(*after),
	}
	if l.secret == "" {
		l.secret = newWebhookSecret()
		fmt.Fprintf(out, "Your webhook signing secret is %s (check forwarded events with it)\n", l.secret)
	} else if _, err := payment.SignWebhook(l.secret, "", 0, nil); err != nil {
		return errors.New("--secret must be whsec_ followed by base64")
	}
	defer l.forward.CloseIdleConnections()
	return l.run(ctx)
}

// errStreamRefused is an answer that reconnecting will not change (a bad
// token, a browser token, no such route).
type errStreamRefused struct{ err *apiError }

func (e *errStreamRefused) Error() string { return e.err.Error() }

func (l *listener) run(ctx context.Context) error {
	backoff := time.Second / 2
	for {
		err := l.stream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var refused *errStreamRefused
		if errors.As(err, &refused) {
			return err
		}
		if l.connected {
			backoff = time.Second / 2
			l.connected = false
		}
		fmt.Fprintf(l.out, "%s  connection lost (%v); reconnecting in %s\n", timeOfDay(), err, backoff)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, listenMaxBackoff)
	}
}

func timeOfDay() string { return time.Now().Format("15:04:05") }

// stream reads one connection of the event stream until it ends.
func (l *listener) stream(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, l.api.base+"/events/stream", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", l.api.auth)
	req.Header.Set("Accept", "text/event-stream")
	if l.lastID != "" {
		req.Header.Set("Last-Event-ID", l.lastID)
	}
	resp, err := l.api.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		e := readAPIError(resp)
		switch resp.StatusCode {
		case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusMethodNotAllowed:
			return &errStreamRefused{e}
		}
		return e
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return &errStreamRefused{&apiError{Status: resp.StatusCode, Code: "not an event stream: " + resp.Header.Get("Content-Type")}}
	}
	l.connected = true
	fmt.Fprintf(l.out, "Ready! Forwarding %s-mode events from %s to %s (^C to quit)\n",
		resp.Header.Get(api.StreamModeHeader), l.api.base, l.forwardTo)

	// A connection that goes silent past the heartbeat is dead.
	var idled atomic.Bool
	idle := time.AfterFunc(listenIdleTimeout, func() { idled.Store(true); cancel() })
	defer idle.Stop()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), listenMaxEvent)
	var id, name string
	var data bytes.Buffer
	for sc.Scan() {
		idle.Reset(listenIdleTimeout)
		line := sc.Text()
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch {
		case line == "":
			if data.Len() > 0 {
				l.deliver(ctx, id, name, bytes.TrimSuffix(data.Bytes(), []byte("\n")))
				if ctx.Err() != nil {
					return ctx.Err()
				}
			}
			if id != "" {
				l.lastID = id
			}
			id, name = "", ""
			data.Reset()
		case field == "":
			// A comment: the heartbeat.
		case field == "id":
			id = value
		case field == "event":
			name = value
		case field == "data":
			data.WriteString(value)
			data.WriteByte('\n')
		}
	}
	switch {
	case idled.Load():
		return fmt.Errorf("nothing came for %s, not even a heartbeat", listenIdleTimeout)
	case sc.Err() != nil:
		return sc.Err()
	}
	return errors.New("the gateway closed the stream")
}

// deliver posts one event to the local URL as a webhook delivery does:
// its body, signed (Standard Webhooks), with the event id as webhook-id
// and Idempotency-Key, and prints one line.
func (l *listener) deliver(ctx context.Context, id, name string, body []byte) {
	ts := time.Now().Unix()
	report := func(outcome string) {
		fmt.Fprintf(l.out, "%s  %-24s %s  --> %s\n", timeOfDay(), name, id, outcome)
	}
	sig, err := payment.SignWebhook(l.secret, id, ts, body)
	if err != nil {
		report("not sent: " + err.Error())
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.forwardTo, bytes.NewReader(body))
	if err != nil {
		report("not sent: " + err.Error())
		return
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "kessai-listen")
	h.Set("Idempotency-Key", id)
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	if l.authToken != "" {
		h.Set("Authorization", l.authToken)
	}
	resp, err := l.forward.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			report("error: " + err.Error())
		}
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	report(fmt.Sprintf("[%d] POST %s", resp.StatusCode, l.forwardTo))
}
