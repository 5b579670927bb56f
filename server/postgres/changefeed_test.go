package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/postgres"
	"github.com/kessai/kessai/server/postgres/postgrestest"
)

// heard collects what a feed delivers.
type heard struct {
	mu   sync.Mutex
	news []payment.News
}

func (h *heard) deliver(n payment.News) {
	h.mu.Lock()
	h.news = append(h.news, n)
	h.mu.Unlock()
}

func (h *heard) all() (n payment.News) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.news {
		n.Changed = append(n.Changed, m.Changed...)
		n.Revoked = append(n.Revoked, m.Revoked...)
		n.Work = n.Work || m.Work
		n.Events = n.Events || m.Events
	}
	return n
}

// listen runs feed.Listen until the test ends.
func listen(t *testing.T, feed payment.ChangeFeed) *heard {
	t.Helper()
	h := &heard{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		feed.Listen(ctx, h.deliver)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

func openFeed(t *testing.T, dbURL string) payment.ChangeFeed {
	t.Helper()
	db, err := postgres.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	feed, err := db.ChangeFeed(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return feed
}

// untilHeard publishes a marker until h hears it, so that what follows is
// published to a listener that is surely listening.
func untilHeard(t *testing.T, from payment.ChangeFeed, h *heard) {
	t.Helper()
	marker := uuid.New()
	deadline := time.Now().Add(10 * time.Second)
	for !slices.Contains(h.all().Changed, marker) {
		if time.Now().After(deadline) {
			t.Fatal("the listener heard nothing in 10 s")
		}
		if err := from.Publish(context.Background(), payment.News{Changed: []uuid.UUID{marker}}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestChangeFeed(t *testing.T) {
	ctx := context.Background()
	schema := postgrestest.Schema(t)
	a, b := openFeed(t, schema), openFeed(t, schema)
	other := openFeed(t, postgrestest.Schema(t))
	heardA, heardB, heardOther := listen(t, a), listen(t, b), listen(t, other)
	untilHeard(t, a, heardB)
	untilHeard(t, b, heardA)

	// More ids than one notification holds, both kinds, both flags.
	var sent payment.News
	for range 700 {
		sent.Changed = append(sent.Changed, uuid.New())
	}
	sent.Revoked = []uuid.UUID{uuid.New(), uuid.New()}
	sent.Work, sent.Events = true, true
	before := len(heardA.all().Changed)
	if err := a.Publish(ctx, sent); err != nil {
		t.Fatal(err)
	}
	var got payment.News
	deadline := time.Now().Add(10 * time.Second)
	for {
		got = heardB.all()
		if len(got.Changed) >= len(sent.Changed) && len(got.Revoked) == len(sent.Revoked) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B heard %d changed and %d revoked ids in 10 s, want %d and %d",
				len(got.Changed), len(got.Revoked), len(sent.Changed), len(sent.Revoked))
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, id := range sent.Changed {
		if !slices.Contains(got.Changed, id) {
			t.Fatalf("B did not hear %s changed", id)
		}
	}
	if !slices.Equal(got.Revoked, sent.Revoked) || !got.Work || !got.Events {
		t.Errorf("B heard revoked %v, work %v, events %v; want %v, true, true", got.Revoked, got.Work, got.Events, sent.Revoked)
	}
	// A sees none of its own news; another schema none of this one's.
	untilHeard(t, b, heardA)
	if n := len(heardA.all().Changed); n != before+1 {
		t.Errorf("A heard %d ids of its own news back", n-before-1)
	}
	if got := heardOther.all(); len(got.Changed) != 0 || got.Work {
		t.Errorf("a feed on another schema heard %d ids", len(got.Changed))
	}
}
