package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kessai/kessai/server/payment"
)

// The rules package payment decides inside one Update, run by many Updates
// at once, as several gateway processes on one database would: each must
// come out as if the Updates had run one after another. An engine with one
// writer passes them trivially; an engine with many connections must lock
// what each rule reads (or abort and run fn again), and these are the
// cases that tell. Every Update here may run its function more than once
// (payment.Storage allows an engine to), so each assigns its result
// afresh.

// concurrently runs n functions at once, started together, and returns
// their errors.
func concurrently(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// testConcurrentDuplicateCharges: concurrent identical charges on one token,
// each deciding the duplicate-charge rule (RecentCharge, then a charge that
// is accepted or rejected as a duplicate), accept exactly one per token;
// charges on another token are not held up by them.
func testConcurrentDuplicateCharges(t *testing.T, s payment.Storage) {
	const workers = 50
	w := newTenants(t, s)
	toks := []*payment.TransactionToken{newToken(w.st, 1), newToken(w.st, 2)}
	createTokens(t, s, toks...)
	since := at(0)
	accepted := make([]bool, workers)
	errs := concurrently(workers, func(i int) error {
		tok := toks[i%len(toks)]
		ctx := context.Background()
		return s.Update(ctx, func(tx payment.Tx) error {
			dup, err := tx.RecentCharge(ctx, tok.ID, 5000, "JPY", since)
			if err != nil {
				return err
			}
			ch := newCharge(tok, 10+i)
			ch.RequestedAmount, ch.Currency, ch.Status, ch.Error = 5000, "JPY", payment.ChargePending, nil
			if dup {
				ch.Status, ch.Error = payment.ChargeFailed, payment.NewPaymentError(payment.ErrTooManyCharges, "duplicate")
			}
			accepted[i] = !dup
			return tx.CreateCharge(ctx, ch)
		})
	})
	for i, err := range errs {
		if err != nil {
			t.Errorf("charge %d: %v", i, err)
		}
	}
	for k, tok := range toks {
		n := 0
		for i := k; i < workers; i += len(toks) {
			if accepted[i] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("token %d: %d of %d concurrent identical charges were accepted, want exactly 1", k, n, workers/len(toks))
		}
		var stored int
		view(t, s, func(ctx context.Context, tx payment.Tx) error {
			p, err := tx.ListCharges(ctx, payment.ChargeFilter{MerchantID: w.m.ID, TokenID: tok.ID},
				payment.ListParams{Limit: payment.MaxLimit})
			for _, ch := range p.Items {
				if ch.Error == nil {
					stored++
				}
			}
			return err
		})
		if stored != 1 {
			t.Errorf("token %d: %d accepted charges stored, want exactly 1", k, stored)
		}
	}
}

var errRefundRefused = errors.New("storagetest: refund exceeds the charge")

// testConcurrentRefunds: concurrent refunds of one charge, each checking
// RefundedAmount against the charged amount before CreateRefund, never
// promise back more than was charged: exactly as many fit as would one
// after another.
func testConcurrentRefunds(t *testing.T, s payment.Storage) {
	const workers, charged, each = 20, 1000, 300
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	ch := newCharge(tok, 2)
	ch.ChargedAmount, ch.Status = int64p(charged), payment.ChargeSuccessful
	createCharges(t, s, ch)
	errs := concurrently(workers, func(i int) error {
		ctx := context.Background()
		return s.Update(ctx, func(tx payment.Tx) error {
			refunded, err := tx.RefundedAmount(ctx, ch.ID)
			if err != nil {
				return err
			}
			if refunded+each > charged {
				return errRefundRefused
			}
			r := newRefund(ch, 10+i)
			r.Status, r.Amount, r.Error = payment.OperationPending, each, nil
			return tx.CreateRefund(ctx, r)
		})
	})
	made := 0
	for i, err := range errs {
		switch {
		case err == nil:
			made++
		case !errors.Is(err, errRefundRefused):
			t.Errorf("refund %d: %v", i, err)
		}
	}
	if want := charged / each; made != want {
		t.Errorf("%d of %d concurrent refunds of %d on a charge of %d were made, want %d", made, workers, each, charged, want)
	}
	view(t, s, func(ctx context.Context, tx payment.Tx) error {
		sum, err := tx.RefundedAmount(ctx, ch.ID)
		if err == nil && sum != int64(made*each) {
			t.Errorf("RefundedAmount = %d, want %d", sum, made*each)
		}
		return err
	})
}

// testConcurrentReadModifyWrite: concurrent Updates that each read an
// object, change it and write it back lose none of the changes, for each
// kind of object package payment changes that way.
func testConcurrentReadModifyWrite(t *testing.T, s payment.Storage) {
	const workers = 20
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	ch := newCharge(tok, 2)
	createCharges(t, s, ch)
	r := newRefund(ch, 3)
	createRefunds(t, s, r)
	sub := newSubscription(tok, 4)
	createSubscriptions(t, s, sub)
	cases := []struct {
		name      string
		increment func(ctx context.Context, tx payment.Tx) error
		read      func(t *testing.T) int64
	}{
		{"Charge", func(ctx context.Context, tx payment.Tx) error {
			c, err := tx.Charge(ctx, ch.ID)
			if err != nil {
				return err
			}
			c.CaptureAmount++
			return tx.UpdateCharge(ctx, c)
		}, func(t *testing.T) int64 { return readCharge(t, s, ch.ID).CaptureAmount }},
		{"Token", func(ctx context.Context, tx payment.Tx) error {
			k, err := tx.Token(ctx, tok.ID)
			if err != nil {
				return err
			}
			k.Card.ExpYear++
			return tx.UpdateToken(ctx, k)
		}, func(t *testing.T) int64 { return int64(readToken(t, s, tok.ID).Card.ExpYear) }},
		{"Refund", func(ctx context.Context, tx payment.Tx) error {
			x, err := tx.Refund(ctx, r.StoreID, r.ChargeID, r.ID)
			if err != nil {
				return err
			}
			x.Amount++
			return tx.UpdateRefund(ctx, x)
		}, func(t *testing.T) int64 { return readRefund(t, s, r).Amount }},
		{"Subscription", func(ctx context.Context, tx payment.Tx) error {
			x, err := tx.Subscription(ctx, sub.ID)
			if err != nil {
				return err
			}
			x.PaymentsMade++
			return tx.UpdateSubscription(ctx, x)
		}, func(t *testing.T) int64 { return int64(readSubscription(t, s, sub.ID).PaymentsMade) }},
	}
	for _, c := range cases {
		// The second round's functions hide the engine's errors behind
		// their own (%v, not %w), as a rule's code may: an engine that
		// retries conflicts must still know its transaction failed.
		for _, wrap := range []bool{false, true} {
			name := c.name
			if wrap {
				name += "/ErrorsWrapped"
			}
			t.Run(name, func(t *testing.T) {
				before := c.read(t)
				errs := concurrently(workers, func(int) error {
					ctx := context.Background()
					return s.Update(ctx, func(tx payment.Tx) error {
						err := c.increment(ctx, tx)
						if err != nil && wrap {
							return fmt.Errorf("increment: %v", err)
						}
						return err
					})
				})
				for i, err := range errs {
					if err != nil {
						t.Errorf("update %d: %v", i, err)
					}
				}
				if got, want := c.read(t), before+workers; got != want {
					t.Errorf("after %d concurrent increments: %d, want %d (%d lost)", workers, got, want, want-got)
				}
			})
		}
	}
}

var errURLTaken = errors.New("storagetest: the URL is taken")

// testConcurrentWebhookURLs: concurrent Updates each giving a new webhook
// of one owner the same URL (in any ASCII case) after WebhookURLTaken said
// it was free create exactly one webhook.
func testConcurrentWebhookURLs(t *testing.T, s payment.Storage) {
	const workers = 20
	w := newTenants(t, s)
	errs := concurrently(workers, func(i int) error {
		hook := newWebhook(w.m.ID, w.st.ID, payment.ModeLive, i)
		hook.URL = "https://shop.example/hooks/kessai"
		if i%2 == 1 {
			hook.URL = strings.ToUpper(hook.URL)
		}
		ctx := context.Background()
		return s.Update(ctx, func(tx payment.Tx) error {
			taken, err := tx.WebhookURLTaken(ctx, hook)
			if err != nil {
				return err
			}
			if taken {
				return errURLTaken
			}
			return tx.CreateWebhook(ctx, hook)
		})
	})
	made := 0
	for i, err := range errs {
		switch {
		case err == nil:
			made++
		case !errors.Is(err, errURLTaken):
			t.Errorf("webhook %d: %v", i, err)
		}
	}
	if made != 1 {
		t.Errorf("%d of %d concurrent webhooks with one URL were created, want exactly 1", made, workers)
	}
}

var errCancelUnderWay = errors.New("storagetest: a cancel is under way")

// testConcurrentPendingCancels: concurrent Updates each reading a charge,
// then PendingCancelFor, then creating a pending cancel when there is none
// (the cancel rule, which writes nothing to the charge itself) create
// exactly one: two Updates that read the same object take turns.
func testConcurrentPendingCancels(t *testing.T, s payment.Storage) {
	const workers = 20
	w := newTenants(t, s)
	tok := newToken(w.st, 1)
	createTokens(t, s, tok)
	ch := newCharge(tok, 2)
	ch.Status, ch.CaptureState = payment.ChargeAuthorized, payment.CaptureNone
	createCharges(t, s, ch)
	errs := concurrently(workers, func(i int) error {
		ctx := context.Background()
		return s.Update(ctx, func(tx payment.Tx) error {
			if _, err := tx.Charge(ctx, ch.ID); err != nil {
				return err
			}
			open, err := tx.PendingCancelFor(ctx, ch.ID)
			if err != nil {
				return err
			}
			if open {
				return errCancelUnderWay
			}
			cn := newCancel(ch, 10+i)
			cn.Status, cn.Error = payment.OperationPending, nil
			return tx.CreateCancel(ctx, cn)
		})
	})
	made := 0
	for i, err := range errs {
		switch {
		case err == nil:
			made++
		case !errors.Is(err, errCancelUnderWay):
			t.Errorf("cancel %d: %v", i, err)
		}
	}
	if made != 1 {
		t.Errorf("%d of %d concurrent cancels of one charge were made pending, want exactly 1", made, workers)
	}
}

// testSnapshotWithinUpdate: an Update reads one snapshot throughout, so a
// rule that reads twice never decides on two states. While an Update is
// between two reads of a merchant's stores, another Update adds one and is
// given up to half a second to commit (an engine with one writer makes it
// wait instead): the first Update's second read still lists what its
// first did.
func testSnapshotWithinUpdate(t *testing.T, s payment.Storage) {
	ctx := t.Context()
	w := newTenants(t, s)
	between, added := make(chan struct{}), make(chan error, 1)
	go func() {
		<-between
		added <- s.Update(context.Background(), func(tx payment.Tx) error {
			return tx.CreateStore(ctx, newStore(w.m.ID, 9))
		})
	}()
	count := func(tx payment.Tx) (int, error) {
		page, err := tx.ListStores(ctx, w.m.ID, payment.ListParams{Limit: payment.MaxLimit})
		return len(page.Items), err
	}
	var first, second int
	err := s.Update(ctx, func(tx payment.Tx) error {
		var err error
		if first, err = count(tx); err != nil {
			return err
		}
		select {
		case <-between:
		default:
			close(between)
		}
		select {
		case err := <-added:
			added <- err
		case <-time.After(500 * time.Millisecond):
		}
		second, err = count(tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-added; err != nil {
		t.Fatal(err)
	}
	if second != first {
		t.Errorf("an Update listed %d stores, then %d: another Update's write appeared in the middle of it", first, second)
	}
}
