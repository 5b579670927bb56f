package demo

import (
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
)

// CheckoutsFile is where the storefront keeps the orders it is waiting to
// be paid for, in DataDir.
const CheckoutsFile = "demo-checkouts.json"

// Bounds of the checkouts kept: as long as a cart lives (the session
// cookie's age), and no more than a busy demo needs.
const (
	checkoutMaxAge = 7 * 24 * time.Hour
	maxCheckouts   = 500
)

// checkout is an order the shopper is paying for: what the checkout page
// asked to be paid, so that the gateway's notification of a payment can
// be checked against it when the shopper never comes back to the shop (a
// wallet paid in another tab, a closed window).
type checkout struct {
	Ref      string `json:"ref"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	// Period is a subscription's: the amount is due every period.
	Period    string      `json:"period,omitempty"`
	Items     []orderItem `json:"items"`
	UpdatedAt time.Time   `json:"updated_at"`
}

// checkoutBook are the checkouts, kept in a JSON file beside the orders.
type checkoutBook struct {
	mu    sync.Mutex
	path  string
	items []*checkout // oldest first
	now   func() time.Time
}

func loadCheckouts(path string, log *slog.Logger, now func() time.Time) (*checkoutBook, error) {
	c := &checkoutBook{path: path, now: now}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, err
	}
	var file struct {
		Checkouts []*checkout `json:"checkouts"`
	}
	if err := json.Unmarshal(b, &file); err != nil {
		// They are only a convenience (the shopper's return still
		// settles): start afresh.
		log.Warn("demo: checkouts file unreadable; starting afresh", "path", path, "error", err)
		return c, nil
	}
	c.items = file.Checkouts
	return c, nil
}

func (c *checkoutBook) get(ref string) (*checkout, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, x := range c.items {
		if x.Ref == ref {
			return x, true
		}
	}
	return nil, false
}

// put records what the order ref is to be paid, replacing what it was
// (the shopper changed the cart and came back to the checkout): only the
// last amount the shop asked for can pay the order.
func (c *checkoutBook) put(n *checkout) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.IndexFunc(c.items, func(x *checkout) bool { return x.Ref == n.Ref })
	if i >= 0 && c.items[i].Amount == n.Amount && c.items[i].Currency == n.Currency && c.items[i].Period == n.Period &&
		slices.Equal(c.items[i].Items, n.Items) {
		return nil
	}
	n.UpdatedAt = c.now().UTC()
	next := slices.DeleteFunc(slices.Clone(c.items), func(x *checkout) bool {
		return x.Ref == n.Ref || n.UpdatedAt.Sub(x.UpdatedAt) > checkoutMaxAge
	})
	next = append(next, n)
	if len(next) > maxCheckouts {
		next = next[len(next)-maxCheckouts:]
	}
	return c.write(next)
}

// remove forgets a checkout once its order is paid.
func (c *checkoutBook) remove(ref string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.ContainsFunc(c.items, func(x *checkout) bool { return x.Ref == ref }) {
		return nil
	}
	return c.write(slices.DeleteFunc(slices.Clone(c.items), func(x *checkout) bool { return x.Ref == ref }))
}

func (c *checkoutBook) write(next []*checkout) error {
	b, err := json.MarshalIndent(struct {
		Checkouts []*checkout `json:"checkouts"`
	}{next}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(c.path, append(b, '\n')); err != nil {
		return err
	}
	c.items = next
	return nil
}
