package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kessai/kessai/server/api"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/univapay"
)

// sseEvent is one event of GET /events/stream.
type sseEvent struct {
	id, name string
	body     map[string]any
}

// sseStream is an open event stream; events delivers what it sends, and
// is closed when the stream ends.
type sseStream struct {
	resp   *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// openStream connects to the event stream and fails unless it is one.
func openStream(t *testing.T, base, auth string, opts ...reqOpt) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/events/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", auth)
	for _, o := range opts {
		o(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		cancel()
		resp.Body.Close()
		t.Fatalf("stream: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sseStream{resp: resp, events: make(chan sseEvent, 100), cancel: cancel}
	t.Cleanup(s.close)
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var ev sseEvent
		var data string
		for sc.Scan() {
			line := sc.Text()
			k, v, _ := strings.Cut(line, ": ")
			switch {
			case line == "":
				if data != "" {
					if err := json.Unmarshal([]byte(data), &ev.body); err != nil {
						t.Errorf("event data %q: %v", data, err)
					}
					s.events <- ev
				}
				ev, data = sseEvent{}, ""
			case k == "id":
				ev.id = v
			case k == "event":
				ev.name = v
			case k == "data":
				data += v
			}
		}
	}()
	return s
}

func (s *sseStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next waits for the stream's next event.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, open := <-s.events:
		if !open {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return sseEvent{}
}

// none checks that no event comes within d (longer than the stream's
// one-second re-read).
func (s *sseStream) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev, open := <-s.events:
		if open {
			t.Errorf("unexpected event %s %s", ev.name, ev.id)
		}
	case <-time.After(d):
	}
}

func TestEventStream(t *testing.T) {
	f := newPayFixture(t, payOptions{events: true})
	ts := httptest.NewServer(f.srv)
	// Closed after the streams (cleanups run last first): Close waits for
	// their handlers.
	t.Cleanup(ts.Close)

	// An event from before the stream is not sent to a new stream.
	before := f.token(t, "4000020000000000")
	time.Sleep(5 * time.Millisecond)
	s := openStream(t, ts.URL, server(f.a1))
	if m := s.resp.Header.Get(api.StreamModeHeader); m != "test" {
		t.Errorf("%s = %q, want test", api.StreamModeHeader, m)
	}
	merch := openStream(t, ts.URL, server(f.merchA))
	other := openStream(t, ts.URL, server(f.a2))
	live := openStream(t, ts.URL, server(f.a1Live))

	tok := f.token(t, "4000020000000000")
	ev := s.next(t)
	if ev.name != "token_created" || jstr(ev.body, "event") != "token_created" || jstr(ev.body, "data.id") != tok ||
		jstr(ev.body, "id") != ev.id || jstr(ev.body, "created_on") == "" {
		t.Fatalf("stream event %s %s: %v (token %s, before %s)", ev.id, ev.name, ev.body, tok, before)
	}
	// The merchant's stream has its stores' events.
	if m := merch.next(t); m.id != ev.id {
		t.Errorf("merchant stream: %s, want %s", m.id, ev.id)
	}

	ch := f.charge(t, tok, 1000, "JPY")
	f.process(t)
	ev2 := s.next(t)
	if ev2.name != "charge_finished" || jstr(ev2.body, "data.id") != ch || jstr(ev2.body, "data.status") != "successful" {
		t.Errorf("second event: %s %v", ev2.name, ev2.body)
	}
	if m := merch.next(t); m.id != ev2.id {
		t.Errorf("merchant stream: %s, want %s", m.id, ev2.id)
	}
	// Another store's stream, and the other mode's, hear none of it.
	other.none(t, 1500*time.Millisecond)
	live.none(t, 0)

	// Resuming after the first event gives the second, with
	// Last-Event-ID as with ?after=.
	for _, opt := range []reqOpt{header("Last-Event-ID", ev.id), func(r *http.Request) { r.URL.RawQuery = "after=" + ev.id }} {
		r := openStream(t, ts.URL, server(f.a1), opt)
		if got := r.next(t); got.id != ev2.id || got.name != "charge_finished" {
			t.Errorf("resumed stream: %s %s, want %s", got.id, got.name, ev2.id)
		}
		r.none(t, 0)
		r.close()
	}
	// Resuming from the start replays every event of the store, the one
	// from before the first stream too.
	r := openStream(t, ts.URL, server(f.a1), header("Last-Event-ID", "00000000-0000-7000-8000-000000000000"))
	if got := r.next(t); got.name != "token_created" || jstr(got.body, "data.id") != before {
		t.Errorf("replay from the start: %s %v, want the token %s", got.name, got.body, before)
	}
	for _, want := range []string{ev.id, ev2.id} {
		if got := r.next(t); got.id != want {
			t.Errorf("replay: %s, want %s", got.id, want)
		}
	}
	r.close()
	// An id no event has is a place in the feed all the same.
	r = openStream(t, ts.URL, server(f.a1), header("Last-Event-ID", payment.NewID().String()))
	r.none(t, 0)
	r.close()

	wantError(t, f.do(t, "GET", "/events/stream", server(f.a1), nil, header("Last-Event-ID", "nope")),
		http.StatusBadRequest, payment.CodeValidation, "Last-Event-ID")
	wantError(t, f.do(t, "GET", "/events/stream?after=nope", server(f.a1), nil), http.StatusBadRequest, payment.CodeValidation, "after")
	wantError(t, f.do(t, "GET", "/events/stream", "", nil), http.StatusUnauthorized, payment.CodeAuthHeaderMissing)
	wantError(t, f.do(t, "GET", "/events/stream", browser(f.a1), nil, origin(payShopOrigin)), http.StatusForbidden, payment.CodeInvalidPermissions)
	wantError(t, f.do(t, "POST", "/events/stream", server(f.a1), nil), http.StatusMethodNotAllowed, payment.CodeNotAllowed)

	// Events committed by another instance (whose bell rings elsewhere)
	// arrive by the stream's own re-read.
	st2 := servicetest.New(t, servicetest.Options{
		Path: filepath.Join(f.dir, sqlite.FileName), Clock: f.clock, PublicOrigin: publicOrigin,
		Config: payment.Config{SecretKey: secretKey}, EncodeEvent: univapay.EncodeEvent,
	})
	srv2 := api.New(api.Config{Service: st2.Service, PublicOrigin: publicOrigin, Logger: slog.New(slog.DiscardHandler)})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/tokens", strings.NewReader(mustJSON(t, cardBody("4000020000000000"))))
	req.Header.Set("Authorization", server(f.a1))
	req.Header.Set("Content-Type", "application/json")
	srv2.ServeHTTP(rec, req)
	tok2 := jstr(ok(t, rec, http.StatusCreated), "id")
	if got := s.next(t); got.name != "token_created" || jstr(got.body, "data.id") != tok2 {
		t.Errorf("event of the other instance: %s %v", got.name, got.body)
	}

	// Shutting down ends the streams, and refuses new ones.
	f.srv.EndStreams()
	select {
	case _, open := <-s.events:
		if open {
			t.Error("an event after EndStreams")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end within 5 s of EndStreams")
	}
	rec = f.do(t, "GET", "/events/stream", server(f.a1), nil)
	wantError(t, rec, http.StatusServiceUnavailable, payment.CodeServiceUnavailable)
}

// TestEventStreamClientGone: a stream's handler returns when its client
// goes away.
func TestEventStreamClientGone(t *testing.T) {
	f := newPayFixture(t, payOptions{events: true})
	ts := httptest.NewServer(f.srv)
	s := openStream(t, ts.URL, server(f.a1))
	s.close()
	// Close waits for the handlers: the stream's must have returned.
	done := make(chan struct{})
	go func() { ts.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream's handler still runs 5 s after its client went")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
