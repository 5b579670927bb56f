package api

import (
	"bytes"
	"encoding/binary"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// The event stream, GET /events/stream: the events of the caller's store
// (a merchant token's: of all its stores) in the token's mode, as
// server-sent events, for `kessai listen` to forward to a local receiver
// without the gateway reaching it. Each event is
//
//	id: <the event's id>
//	event: <its name>
//	data: <the body a webhook delivery posts (payment.WebhookBody)>
//
// A client resumes after the event named by Last-Event-ID (what
// EventSource sends when it reconnects) or ?after=; without either the
// stream starts now. It needs the token's secret, like the webhooks.
const (
	// streamBatch is how many events one read of the feed returns.
	streamBatch = 100
	// streamRecheck is how often the feed is read without this instance's
	// bell ringing: events committed by another instance ring none here.
	streamRecheck = time.Second
	// streamHeartbeat is the longest the stream stays silent: a comment
	// line keeps proxies from closing it and finds a client gone.
	streamHeartbeat = 15 * time.Second
	// streamWriteTimeout is how long one write may take; a client that
	// reads nothing for that long is dropped.
	streamWriteTimeout = 30 * time.Second
	// streamReauth is how often the stream checks its token again: a
	// revoked token's stream ends within it.
	streamReauth = time.Minute
	// streamRetryMillis is the reconnection delay the stream suggests to
	// EventSource clients.
	streamRetryMillis = 1000
)

// StreamModeHeader names the mode of the events a stream carries.
const StreamModeHeader = "Kessai-Mode"

// streamStop is closed when the server shuts down, ending every stream:
// a stream never becomes idle, and http.Server.Shutdown waits for idle
// connections.
type streamStop struct {
	mu     sync.Mutex
	ch     chan struct{}
	closed bool
}

func (st *streamStop) done() <-chan struct{} {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ch == nil {
		st.ch = make(chan struct{})
	}
	return st.ch
}

func (st *streamStop) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ch == nil {
		st.ch = make(chan struct{})
	}
	if !st.closed {
		st.closed = true
		close(st.ch)
	}
}

// EndStreams ends the event streams under way and refuses new ones (503,
// so that clients reconnect elsewhere or after the restart). The gateway
// registers it with http.Server.RegisterOnShutdown, so that a shutdown
// does not wait its whole timeout on them.
func (s *Server) EndStreams() { s.streams.close() }

// feedPosition is the place in the event feed of the instant t: event ids
// are UUIDv7 (payment.NewID), ordered by the millisecond they were made
// in, and the feed is read in id order, so the least UUIDv7 of t's
// millisecond comes before every event made from then on.
func feedPosition(t time.Time) uuid.UUID {
	var id uuid.UUID
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(t.UnixMilli()))
	copy(id[:6], ms[2:])
	id[6] = 0x70 // version 7
	id[8] = 0x80 // RFC 9562 variant
	return id
}

// streamStart is where a stream resumes: after the event of Last-Event-ID
// or ?after=, or (uuid.Nil) from now.
func streamStart(r *http.Request) (uuid.UUID, error) {
	field, s := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if s == "" {
		field, s = "after", r.URL.Query().Get("after")
	}
	if s == "" {
		return uuid.Nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, payment.Invalid(field, payment.ReasonInvalidUUID)
	}
	return id, nil
}

// writeStreamEvent writes one event. WebhookBody is compact JSON, one line
// (json.Marshal escapes every line break inside strings).
func writeStreamEvent(b *bytes.Buffer, ev *payment.Event, body []byte) {
	b.WriteString("id: ")
	b.WriteString(ev.ID.String())
	b.WriteString("\nevent: ")
	b.WriteString(ev.Name)
	b.WriteString("\ndata: ")
	b.Write(body)
	b.WriteString("\n\n")
}

func (s *Server) eventStream(w http.ResponseWriter, r *http.Request) {
	auth := authOf(r)
	if auth.err != nil || auth.caller == nil {
		err := auth.err
		if err == nil {
			err = payment.Errorf(payment.CodeAuthHeaderMissing, "")
		}
		s.writeError(w, r, err)
		return
	}
	c := auth.caller
	after, err := streamStart(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if after == uuid.Nil {
		after = feedPosition(time.Now())
	}
	stop := s.streams.done()
	select {
	case <-stop:
		w.Header().Set("Retry-After", "1")
		s.writeError(w, r, payment.Errorf(payment.CodeServiceUnavailable, "the gateway is shutting down"))
		return
	default:
	}
	ctx := r.Context()
	// The bell is taken before each read, so that events committed during
	// the read ring it.
	bell := s.svc.Notify.EventsBell()
	evs, err := s.svc.Notify.Events(ctx, c, after, streamBatch)
	if err != nil {
		s.writeError(w, r, err)
		return
	}

	rc := http.NewResponseController(w)
	// The server's read timeout would end the stream's request (its
	// context) while it runs; writes get a deadline of their own instead
	// of the server's write timeout.
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set(StreamModeHeader, string(c.Token().Mode))
	write := func(b []byte) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	w.WriteHeader(http.StatusOK)
	if !write([]byte("retry: " + strconv.Itoa(streamRetryMillis) + "\n: kessai events, " + string(c.Token().Mode) + " mode\n\n")) {
		return
	}

	recheck := time.NewTicker(streamRecheck)
	defer recheck.Stop()
	heartbeat := time.NewTicker(streamHeartbeat)
	defer heartbeat.Stop()
	reauth := time.NewTicker(streamReauth)
	defer reauth.Stop()
	var buf bytes.Buffer
	for {
		buf.Reset()
		for _, ev := range evs {
			body, err := payment.WebhookBody(ev)
			if err != nil {
				s.logStream(r, "encode event", err)
				return
			}
			writeStreamEvent(&buf, ev, body)
			after = ev.ID
		}
		if buf.Len() > 0 {
			if !write(buf.Bytes()) {
				return
			}
			heartbeat.Reset(streamHeartbeat)
		}
		for waiting := len(evs) < streamBatch; waiting; {
			select {
			case <-ctx.Done():
				return
			case <-stop:
				return
			case <-bell:
				waiting = false
			case <-recheck.C:
				waiting = false
			case <-heartbeat.C:
				if !write([]byte(": ping\n\n")) {
					return
				}
			case <-reauth.C:
				if _, err := s.svc.Access.Authenticate(ctx, r.Header.Get("Authorization"), s.requestOrigin(r)); err != nil {
					return
				}
			}
		}
		bell = s.svc.Notify.EventsBell()
		if evs, err = s.svc.Notify.Events(ctx, c, after, streamBatch); err != nil {
			if ctx.Err() == nil {
				s.logStream(r, "read events", err)
			}
			return
		}
	}
}

func (s *Server) logStream(r *http.Request, op string, err error) {
	s.log.LogAttrs(r.Context(), slog.LevelError, "event stream",
		slog.String("request_id", requestID(r.Context())), slog.String("op", op), slog.String("error", err.Error()))
}
