package charging

import (
	"context"
	"github.com/kessai/kessai/server/payment"
	"log/slog"
	"sync"
	"time"
)

func newNewsOutbox() *payment.NewsOutbox {
	return &payment.NewsOutbox{Ready: make(chan struct{}, 1)}
}

// feedRetry is how long the Service waits before listening again after
// the feed's connection failed.
const feedRetry = time.Second

// RunChangeFeed publishes this process's news and acts on the other
// processes' until ctx is done. Without a ChangeFeed in the Config it
// returns at once.
func (s *Service) RunChangeFeed(ctx context.Context, log *slog.Logger) {
	if s.feed == nil {
		return
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.publishNews(ctx, log)
	}()
	for ctx.Err() == nil {
		err := s.feed.Listen(ctx, s.hearNews)
		if ctx.Err() != nil {
			break
		}
		log.Warn("change feed: listening again after an error", "error", err)
		// Whatever was published while nobody listened is not coming:
		// every waiter reads again now rather than at its next recheck.
		s.changes.NotifyAll()
		s.wakeWorkerHere()
		s.events.Notify()
		select {
		case <-ctx.Done():
		case <-time.After(feedRetry):
		}
	}
	wg.Wait()
}

func (s *Service) publishNews(ctx context.Context, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.outbox.Ready:
		}
		n, dropped := s.outbox.Take()
		if dropped > 0 {
			log.Warn("change feed: news dropped while the outbox was full", "dropped", dropped)
		}
		if n.Empty() {
			continue
		}
		if err := s.feed.Publish(ctx, n); err != nil && ctx.Err() == nil {
			log.Warn("change feed: publishing failed; other processes will find the changes when they read again", "error", err)
		}
	}
}

// hearNews acts on another process's news, on this process only: nothing
// heard is published again.
func (s *Service) hearNews(n payment.News) {
	for _, id := range n.Revoked {
		s.markAppTokenRevoked(id)
	}
	for _, id := range n.Changed {
		s.changes.NotifyHere(id)
	}
	if n.Work {
		s.wakeWorkerHere()
	}
	if n.Events {
		s.events.Notify()
	}
}
