package payment_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sqlite"
)

// newsHub is an in-memory ChangeFeed shared by the processes of a test, as
// a database's LISTEN/NOTIFY channel is shared by real ones.
type newsHub struct {
	mu        sync.Mutex
	listeners map[int]func(payment.News)
	next      int
	// deaf, when set, makes each feed's first Listen hear nothing until
	// deaf is closed, and then fail, as a connection that silently broke.
	deaf chan struct{}
}

// listening waits until n feeds listen.
func (h *newsHub) listening(t *testing.T, n int) {
	t.Helper()
	kessaitest.WaitFor(t, 10*time.Second, "the feeds to listen", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.listeners) == n
	})
}

type hubFeed struct {
	hub    *newsHub
	failed bool
}

func (f *hubFeed) Publish(_ context.Context, n payment.News) error {
	f.hub.mu.Lock()
	defer f.hub.mu.Unlock()
	for _, deliver := range f.hub.listeners {
		deliver(n)
	}
	return nil
}

func (f *hubFeed) Listen(ctx context.Context, deliver func(payment.News)) error {
	if f.hub.deaf != nil && !f.failed {
		f.failed = true
		<-f.hub.deaf
		return errors.New("connection reset")
	}
	f.hub.mu.Lock()
	if f.hub.listeners == nil {
		f.hub.listeners = map[int]func(payment.News){}
	}
	id := f.hub.next
	f.hub.next++
	f.hub.listeners[id] = deliver
	f.hub.mu.Unlock()
	<-ctx.Done()
	f.hub.mu.Lock()
	delete(f.hub.listeners, id)
	f.hub.mu.Unlock()
	return ctx.Err()
}

// linkedStacks starts two services on one database, linked by a hub, that
// would otherwise notice each other's changes only after an hour: their
// long polls and app-token caches wait that long before reading again.
func linkedStacks(t *testing.T, hub *newsHub) (a, b *servicetest.Stack) {
	t.Helper()
	path := filepath.Join(t.TempDir(), sqlite.FileName)
	open := func() *servicetest.Stack {
		st := servicetest.New(t, servicetest.Options{Path: path, Configure: func(c *payment.Config) {
			c.ChangeFeed = &hubFeed{hub: hub}
			c.LongPollRecheck = time.Hour
			c.AuthCacheTTL = time.Hour
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			st.Service.DB.RunChangeFeed(ctx, slog.New(slog.DiscardHandler))
		}()
		t.Cleanup(func() { cancel(); <-done })
		return st
	}
	return open(), open()
}

func TestChangeFeedLinksProcesses(t *testing.T) {
	ctx := context.Background()
	hub := &newsHub{}
	a, b := linkedStacks(t, hub)
	hub.listening(t, 2)
	demo := a.SeedDemo(t)
	onB, err := b.Service.Access.Authenticate(ctx, demo.Auth, "")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a long poll on A answers when B finishes the charge", func(t *testing.T) {
		ch := newCardCharge(t, a.Service, demo.Caller)
		polled := pollCharge(t, a.Service, demo.Caller, ch)
		time.Sleep(50 * time.Millisecond) // let the poll start waiting
		if _, err := b.Service.Work.ProcessPending(ctx, 50); err != nil {
			t.Fatal(err)
		}
		awaitPoll(t, polled)
	})

	// $charge->cancel(); $charge->awaitResult(5) with the cancel's worker
	// in another process: the poll waits for the operation, and the other
	// process's news of it, about the charge, wakes it.
	t.Run("a long poll on A of a charge being canceled or refunded answers when B finishes the operation", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			capture bool
			start   func(ch *payment.Charge) error
			want    payment.ChargeStatus
		}{
			{"cancel", false, func(ch *payment.Charge) error {
				_, err := a.Service.Refunds.CreateCancel(ctx, demo.Caller, ch.StoreID, ch.ID, payment.NewCancel{})
				return err
			}, payment.ChargeCanceled},
			{"refund", true, func(ch *payment.Charge) error {
				_, err := a.Service.Refunds.CreateRefund(ctx, demo.Caller, ch.StoreID, ch.ID, payment.NewRefund{Amount: 300, Currency: "JPY"})
				return err
			}, payment.ChargeSuccessful},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ch := newCardChargeCapture(t, a.Service, demo.Caller, tc.capture)
				if _, err := b.Service.Work.ProcessPending(ctx, 50); err != nil {
					t.Fatal(err)
				}
				if err := tc.start(ch); err != nil {
					t.Fatal(err)
				}
				polled := make(chan *payment.Charge, 1)
				go func() {
					got, err := a.Service.Charging.Charge(context.Background(), demo.Caller, ch.StoreID, ch.ID, time.Minute)
					if err != nil {
						t.Error(err)
					}
					polled <- got
				}()
				time.Sleep(50 * time.Millisecond) // let the poll start waiting
				select {
				case got := <-polled:
					t.Fatalf("the poll answered %v while the %s waited for the worker", got.Status, tc.name)
				default:
				}
				if _, err := b.Service.Work.ProcessPending(ctx, 50); err != nil {
					t.Fatal(err)
				}
				select {
				case got := <-polled:
					if got == nil || got.Status != tc.want {
						t.Errorf("the poll answered %+v, want %s", got, tc.want)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("the long poll still waits 10 s after the other process finished the %s", tc.name)
				}
			})
		}
	})

	t.Run("B's worker takes work A queued at once", func(t *testing.T) {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.Service.Work.RunWorker(wctx, time.Hour, slog.New(slog.DiscardHandler))
		}()
		defer func() { stop(); <-done }()
		time.Sleep(50 * time.Millisecond) // B's worker has made its first pass
		ch := newCardCharge(t, a.Service, demo.Caller)
		kessaitest.WaitFor(t, 10*time.Second, "B's worker to settle A's charge", func() bool {
			got, err := a.Service.Charging.Charge(ctx, demo.Caller, ch.StoreID, ch.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			return servicetest.Settled(got)
		})
	})

	t.Run("an app token revoked on B is refused on A at once", func(t *testing.T) {
		issued, err := b.Service.Access.IssueStoreAppToken(ctx, demo.StoreID, payment.NewAppToken{})
		if err != nil {
			t.Fatal(err)
		}
		auth := "Bearer " + issued.Secret + "." + issued.JWT
		if _, err := a.Service.Access.Authenticate(ctx, auth, ""); err != nil {
			t.Fatal(err) // A trusts it now, for an hour
		}
		if err := b.Service.Access.RevokeAppToken(ctx, onB, demo.StoreID, issued.ID); err != nil {
			t.Fatal(err)
		}
		kessaitest.WaitFor(t, 10*time.Second, "A to refuse the revoked token", func() bool {
			_, err := a.Service.Access.Authenticate(ctx, auth, "")
			return payment.ErrorCode(err) == payment.CodeInvalidAppToken
		})
	})
}

// News published while a process could not hear it is lost; when its feed
// comes back, every long poll it holds reads again rather than waiting for
// its next recheck.
func TestChangeFeedRereadsAfterReconnecting(t *testing.T) {
	ctx := context.Background()
	hub := &newsHub{deaf: make(chan struct{})}
	a, b := linkedStacks(t, hub)
	demo := a.SeedDemo(t)
	ch := newCardCharge(t, a.Service, demo.Caller)
	polled := pollCharge(t, a.Service, demo.Caller, ch)
	time.Sleep(50 * time.Millisecond)
	if _, err := b.Service.Work.ProcessPending(ctx, 50); err != nil {
		t.Fatal(err)
	}
	close(hub.deaf)
	awaitPoll(t, polled)
}

// pollCharge starts a long poll of a minute on ch.
func pollCharge(t *testing.T, svc *services.Set, c *payment.Caller, ch *payment.Charge) <-chan *payment.Charge {
	t.Helper()
	polled := make(chan *payment.Charge, 1)
	go func() {
		got, err := svc.Charging.Charge(context.Background(), c, ch.StoreID, ch.ID, time.Minute)
		if err != nil {
			t.Error(err)
		}
		polled <- got
	}()
	return polled
}

// awaitPoll wants the poll to answer within 10 s with the settled charge.
func awaitPoll(t *testing.T, polled <-chan *payment.Charge) {
	t.Helper()
	select {
	case got := <-polled:
		if got == nil || !servicetest.Settled(got) {
			t.Errorf("the poll answered %+v, want the charge the other process settled", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll still waits 10 s after the other process settled the charge")
	}
}

// newCardCharge creates a charge on a new card token and leaves it to the
// worker.
func newCardCharge(t *testing.T, svc *services.Set, c *payment.Caller) *payment.Charge {
	t.Helper()
	return newCardChargeCapture(t, svc, c, true)
}

// newCardChargeCapture is newCardCharge, captured or only authorised.
func newCardChargeCapture(t *testing.T, svc *services.Set, c *payment.Caller, capture bool) *payment.Charge {
	t.Helper()
	ctx := context.Background()
	tt, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: "4242424242424242", ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tt.ID, Amount: 1000, Currency: "JPY", Capture: &capture})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}
