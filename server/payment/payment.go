// Package payment is Kessai's domain: the merchants, stores, app tokens and
// payments it manages, the rules that govern them, the error codes it speaks
// and the interfaces its storage engines and processors implement.
//
// This root holds what every part of the domain shares: the types, errors
// and codes, money, modes, the clock, the Caller, and the rules that are
// pure functions of them. What the domain does lives in a package per
// capability beneath it, each layered above the ones it uses
// (TestDependencyFloors in server/deps_test.go keeps it so):
//
//   - outbox: every transaction, and what it leaves for after its commit
//     (events and deliveries, work, long polls, the change feed);
//   - workqueue: the worker, which runs the kinds of work the others
//     register;
//   - access: app tokens, Authenticate, the console's accounts;
//   - charging: tokens, charges, refunds and cancels, 3-D Secure and the
//     shopper's approvals, over the payment-method seam (method.go);
//   - notify: webhooks and their deliveries, the event stream;
//   - merchants: a merchant's view of its account, stores and ledger;
//   - subscriptions: recurring payments, charged through charging;
//   - services: all of them over one storage engine.
//
// The domain imports nothing else of Kessai's but the card rules of
// wasm/card (a leaf package of pure functions shared with the browser
// widget), so the rules can be read, tested and reused without HTTP, SQL or
// a particular acquirer in the way. The HTTP API (package api) decodes
// requests, calls one service method and encodes the answer; the storage
// engines (sqlite, postgres) only store what they are given.
package payment

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Clock is how every rule reads the time, so tests can move it by hand.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns the current UTC time.
func (SystemClock) Now() time.Time { return time.Now().UTC() }

// Mode separates test traffic from live traffic. The two never share
// objects, limits or outcomes.
type Mode string

// The processing modes. PHP's SDK rejects anything else, so there are only two.
const (
	ModeTest Mode = "test"
	ModeLive Mode = "live"
)

// Valid reports whether m is one of the known modes.
func (m Mode) Valid() bool { return m == ModeTest || m == ModeLive }

// NewID returns a time-ordered (version 7) UUID. Ordering by id is ordering
// by creation, which is what cursor pagination walks.
func NewID() uuid.UUID {
	id, err := uuid.NewV7()
	if err != nil {
		// NewV7 only fails when the system's random source does, and then
		// nothing sensible can go on.
		panic(err)
	}
	return id
}

// Direction is the order of a list: newest first (desc) by default.
type Direction string

// The list orders.
const (
	Desc Direction = "desc"
	Asc  Direction = "asc"
)

// Pagination limits of UnivaPay's API.
const (
	DefaultLimit = 10
	MaxLimit     = 100
)

// ListParams selects one page of a list.
type ListParams struct {
	Limit     int
	Cursor    uuid.UUID // exclusive; uuid.Nil means from the start
	Direction Direction
}

// Page is one page of a list. TotalHits is only counted for a first page
// (no cursor), as the reference describes; it is nil otherwise.
type Page[T any] struct {
	Items     []T
	HasMore   bool
	TotalHits *int
}

// Storage is a storage engine. Every write happens inside Update, whose
// function runs in one transaction: either all its writes land or none does.
type Storage interface {
	// Update runs fn in a read-write transaction and commits it when fn
	// returns nil. An engine may run concurrent Updates in one shared
	// transaction and COMMIT (group commit), as long as each Update still
	// behaves as a transaction of its own, which the storage suite checks:
	//   - all or nothing per Update: fn's error (or panic) undoes fn's
	//     writes only, never another Update's;
	//   - serializable: fn sees the writes of every Update that was
	//     committed, or ran before it in the same shared transaction, and
	//     no write of an Update that failed; Views see committed data only;
	//   - durable when acknowledged: Update returns nil only once fn's
	//     writes are committed durably; if the shared COMMIT fails, every
	//     Update in it fails, those whose fn returned an error included
	//     (their error may rest on the others' writes);
	//   - fn is not started once ctx is done.
	// An engine may run fn more than once, each time in a new transaction,
	// when the database aborts one as a conflict with another (PostgreSQL's
	// serialization failures and deadlocks): fn must assign what it
	// reports afresh on each run and act outside the transaction only
	// after Update returns, as every Update of this package does.
	Update(ctx context.Context, fn func(Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(Tx) error) error
	Close() error
}

// Tx is what a transaction can read and write: every area's rows, each
// declared on its own below (no area needs more than 20 methods). Lookups
// of a missing row return an *Error with code NOT_FOUND.
type Tx interface {
	MerchantRows
	AccountRows
	AppTokenRows
	TokenRows
	ChargeRows
	RefundRows
	ApprovalRows
	TransferRows
	WebhookRows
	EventRows
	WorkRows
	SubscriptionRows
	IdempotencyRows
	QuotaRows
}

// MerchantRows are the merchants and their stores.
type MerchantRows interface {
	CreateMerchant(ctx context.Context, m *Merchant) error
	Merchant(ctx context.Context, id uuid.UUID) (*Merchant, error)
	CountMerchants(ctx context.Context) (int, error)
	CreateStore(ctx context.Context, s *Store) error
	Store(ctx context.Context, id uuid.UUID) (*Store, error)
	ListStores(ctx context.Context, merchantID uuid.UUID, p ListParams) (Page[*Store], error)

	// UpdateStore writes a store's name, PCI flag and settings. A read of
	// a store in an Update is a read for writing.
	UpdateStore(ctx context.Context, s *Store) error
}

// AccountRows are the console's users, sessions and password resets.
type AccountRows interface {
	CreateUser(ctx context.Context, u *User) error
	UserByEmail(ctx context.Context, email string) (*User, error)
	SetUserPassword(ctx context.Context, id uuid.UUID, hash []byte) error
	User(ctx context.Context, id uuid.UUID) (*User, error)

	// Console sessions and password resets (access/console.go), found by the
	// keyed hash of their token. DeleteConsoleSessions deletes the user's
	// sessions created before createdBefore or last seen before
	// seenBefore. UsePasswordResets marks every unused reset of the user
	// used at at. A read of a reset or a session in an Update is a read
	// for writing: two Updates using one reset link cannot both see it
	// unused.
	CreateConsoleSession(ctx context.Context, s *ConsoleSession) error
	ConsoleSession(ctx context.Context, tokenHash []byte) (*ConsoleSession, error)
	UpdateConsoleSession(ctx context.Context, s *ConsoleSession) error
	DeleteConsoleSession(ctx context.Context, tokenHash []byte) error
	DeleteConsoleSessions(ctx context.Context, userID uuid.UUID, createdBefore, seenBefore time.Time) error
	CreatePasswordReset(ctx context.Context, r *PasswordReset) error
	PasswordReset(ctx context.Context, tokenHash []byte) (*PasswordReset, error)
	UsePasswordResets(ctx context.Context, userID uuid.UUID, at time.Time) error
}

// AppTokenRows are the app tokens.
type AppTokenRows interface {
	CreateAppToken(ctx context.Context, t *AppToken) error
	AppToken(ctx context.Context, id uuid.UUID) (*AppToken, error)
	ListAppTokens(ctx context.Context, f AppTokenFilter, p ListParams) (Page[*AppToken], error)
	RevokeAppToken(ctx context.Context, id uuid.UUID, at time.Time) error
	ActiveDomains(ctx context.Context) ([]string, error)
}

// TokenRows are the transaction tokens.
type TokenRows interface {
	CreateToken(ctx context.Context, t *TransactionToken) error
	Token(ctx context.Context, id uuid.UUID) (*TransactionToken, error)
	UpdateToken(ctx context.Context, t *TransactionToken) error

	// EraseTokenCVC forgets a token's sealed CVC.
	EraseTokenCVC(ctx context.Context, id uuid.UUID) error
	ListTokens(ctx context.Context, f TokenFilter, p ListParams) (Page[*TransactionToken], error)
}

// ChargeRows are the charges and the ledger of charges and refunds.
type ChargeRows interface {
	CreateCharge(ctx context.Context, c *Charge) error
	Charge(ctx context.Context, id uuid.UUID) (*Charge, error)
	UpdateCharge(ctx context.Context, c *Charge) error
	ListCharges(ctx context.Context, f ChargeFilter, p ListParams) (Page[*Charge], error)

	// ChargeStats counts the charges f selects by status and currency
	// and sums their requested amounts; a group without charges is not
	// listed.
	ChargeStats(ctx context.Context, f ChargeStatsFilter) ([]ChargeStat, error)

	// RecentCharge reports whether a charge on the token for this amount
	// and currency was accepted (not itself rejected as a duplicate) at or
	// after since.
	RecentCharge(ctx context.Context, tokenID uuid.UUID, amount int64, currency string, since time.Time) (bool, error)

	// PutLedgerEntry inserts or updates the history line of a resource.
	PutLedgerEntry(ctx context.Context, e *LedgerEntry) error
	ListLedger(ctx context.Context, f LedgerFilter, p ListParams) (Page[*LedgerEntry], error)
}

// RefundRows are the refunds and cancels of charges.
type RefundRows interface {
	CreateRefund(ctx context.Context, r *Refund) error

	// Refund reads a refund of the charge chargeID of the store storeID;
	// one of another charge, store or merchant is NOT_FOUND, so that an id
	// a request names never reads more than it may. QueuedRefund reads
	// one by its id alone, for the worker, whose work items name nothing
	// else.
	Refund(ctx context.Context, storeID, chargeID, id uuid.UUID) (*Refund, error)
	QueuedRefund(ctx context.Context, id uuid.UUID) (*Refund, error)
	UpdateRefund(ctx context.Context, r *Refund) error
	ListRefunds(ctx context.Context, chargeID uuid.UUID, p ListParams) (Page[*Refund], error)

	// RefundedAmount sums a charge's refunds that are pending or
	// successful: what is already promised back.
	RefundedAmount(ctx context.Context, chargeID uuid.UUID) (int64, error)

	// PendingRefundFor reports whether a refund of the charge is still
	// waiting for the worker.
	PendingRefundFor(ctx context.Context, chargeID uuid.UUID) (bool, error)
	CreateCancel(ctx context.Context, c *Cancel) error

	// Cancel and QueuedCancel read a cancel as Refund and QueuedRefund
	// read a refund.
	Cancel(ctx context.Context, storeID, chargeID, id uuid.UUID) (*Cancel, error)
	QueuedCancel(ctx context.Context, id uuid.UUID) (*Cancel, error)
	UpdateCancel(ctx context.Context, c *Cancel) error
	ListCancels(ctx context.Context, chargeID uuid.UUID, p ListParams) (Page[*Cancel], error)
	PendingCancelFor(ctx context.Context, chargeID uuid.UUID) (bool, error)
}

// ApprovalRows are what a shopper approves: a 3-D Secure challenge, a wallet
// payment, a konbini payment or a bank transfer.
type ApprovalRows interface {
	// Approvals (charging/approval.go): CreateApproval records a new one;
	// Approval finds one by its key and ApprovalFor the latest of a
	// resource (both NOT_FOUND when there is none).
	CreateApproval(ctx context.Context, a *Approval) error
	Approval(ctx context.Context, key string) (*Approval, error)
	ApprovalFor(ctx context.Context, resourceID uuid.UUID) (*Approval, error)
	UpdateApproval(ctx context.Context, a *Approval) error
}

// TransferRows are the bank transfers' ledgers.
type TransferRows interface {
	// AddTransferEntry records a line of a charge's ledger;
	// LatestTransferEntry reads its last (NOT_FOUND when it has none);
	// ListTransferEntries pages through them by id.
	AddTransferEntry(ctx context.Context, e *TransferEntry) error
	LatestTransferEntry(ctx context.Context, chargeID uuid.UUID) (*TransferEntry, error)
	ListTransferEntries(ctx context.Context, chargeID uuid.UUID, p ListParams) (Page[*TransferEntry], error)
}

// WebhookRows are the merchants' webhooks.
type WebhookRows interface {
	// Webhooks (notify/webhook.go). WebhookURLTaken reports whether another
	// webhook of w's merchant, store (uuid.Nil: merchant-level) and mode
	// has w's URL, compared without regard to ASCII case. ActiveWebhooks
	// are the active webhooks of mode that hear a store's events: the
	// store's own and its merchant's merchant-level ones.
	CreateWebhook(ctx context.Context, w *Webhook) error
	Webhook(ctx context.Context, id uuid.UUID) (*Webhook, error)
	UpdateWebhook(ctx context.Context, w *Webhook) error
	DeleteWebhook(ctx context.Context, id uuid.UUID) error
	ListWebhooks(ctx context.Context, f WebhookFilter, p ListParams) (Page[*Webhook], error)
	WebhookURLTaken(ctx context.Context, w *Webhook) (bool, error)
	ActiveWebhooks(ctx context.Context, merchantID, storeID uuid.UUID, mode Mode) ([]*Webhook, error)
}

// EventRows are the events and their webhook deliveries.
type EventRows interface {
	// Events and their deliveries (notify/delivery.go). ListEvents returns, oldest
	// first, up to limit events of f after f.After. ListDeliveries is a
	// webhook's delivery log, newest first by default; DeliveryFor is the
	// delivery of one event to one webhook (NOT_FOUND when none).
	CreateEvent(ctx context.Context, e *Event) error
	Event(ctx context.Context, id uuid.UUID) (*Event, error)
	ListEvents(ctx context.Context, f EventFilter, limit int) ([]*Event, error)
	CreateDelivery(ctx context.Context, d *Delivery) error
	Delivery(ctx context.Context, id uuid.UUID) (*Delivery, error)
	DeliveryFor(ctx context.Context, webhookID, eventID uuid.UUID) (*Delivery, error)
	UpdateDelivery(ctx context.Context, d *Delivery) error
	ListDeliveries(ctx context.Context, webhookID uuid.UUID, p ListParams) (Page[*Delivery], error)
}

// WorkRows are the work queue.
type WorkRows interface {
	// The work queue (see Work). InsertWork adds an item due at due,
	// unclaimed, with no attempts (the domain calls it through
	// outbox.Tx.EnqueueWork, which also wakes the worker); an item of
	// that kind and id already queued is left as it is. It is called in the transaction of the state
	// change that needs the work, so the two land together or not at all.
	InsertWork(ctx context.Context, kind WorkKind, id uuid.UUID, due time.Time) error

	// Work returns one queued item (NOT_FOUND when there is none).
	Work(ctx context.Context, kind WorkKind, id uuid.UUID) (*Work, error)

	// ClaimWork claims up to limit items that are due at now and not
	// leased (never claimed, or their lease ended at or before now), the
	// earliest due first and, among those, the first queued first. They
	// are leased to claimant until leaseUntil and returned as claimed. It
	// is atomic: while a lease holds, no other claim returns the item.
	ClaimWork(ctx context.Context, claimant string, now, leaseUntil time.Time, limit int) ([]Work, error)

	// ExtendWorkLease moves the lease of an item that claimant still
	// holds to until. Like the three below, it changes nothing when
	// the item is gone or its claim is no longer w.ClaimedBy's.
	ExtendWorkLease(ctx context.Context, w Work, until time.Time) error

	// CompleteWork removes a finished item.
	CompleteWork(ctx context.Context, w Work) error

	// RetryWork counts a failed attempt, records its error, makes the
	// item due again at due and ends the claim.
	RetryWork(ctx context.Context, w Work, due time.Time, lastError string) error

	// ReleaseWork ends the claim and changes nothing else: the item is
	// given back as it was claimed, for any worker to take.
	ReleaseWork(ctx context.Context, w Work) error

	// MoveWorkDue queues an item due at due, or moves one already
	// queued to due; its attempts and any claim on it stay as they are.
	MoveWorkDue(ctx context.Context, kind WorkKind, id uuid.UUID, due time.Time) error

	// WorkQueueStats describes the queue at now (workqueue.Queue.Stats): one row
	// per kind that has queued items, sorted by kind, in one aggregate
	// query. An item is due when its due time is at or before now, to the
	// microsecond, as ClaimWork counts it, whether or not it is claimed.
	WorkQueueStats(ctx context.Context, now time.Time) ([]WorkQueueStats, error)
}

// SubscriptionRows are the subscriptions and their scheduled payments.
type SubscriptionRows interface {
	// Subscriptions and their scheduled payments (subscriptions/subscription.go).
	// ListScheduledPayments lists a subscription's payments, newest first
	// by default (by id: the order they were made in).
	CreateSubscription(ctx context.Context, sub *Subscription) error
	Subscription(ctx context.Context, id uuid.UUID) (*Subscription, error)
	UpdateSubscription(ctx context.Context, sub *Subscription) error
	ListSubscriptions(ctx context.Context, f SubscriptionFilter, p ListParams) (Page[*Subscription], error)
	CreateScheduledPayment(ctx context.Context, p *ScheduledPayment) error
	ScheduledPayment(ctx context.Context, id uuid.UUID) (*ScheduledPayment, error)
	UpdateScheduledPayment(ctx context.Context, p *ScheduledPayment) error
	ListScheduledPayments(ctx context.Context, subscriptionID uuid.UUID, p ListParams) (Page[*ScheduledPayment], error)
}

// IdempotencyRows are what a domain transaction writes of an idempotency key.
type IdempotencyRows interface {
	// RecordIdempotentEffect notes on the idempotency key of ref what the
	// transaction makes (idempotency.go), if ref's reservation still holds
	// the key in flight, and reports whether it did. It is the one write
	// of the idempotency keys inside a domain transaction: the object and
	// the note of it commit together, and a reservation taken over
	// meanwhile (its lock moved) makes it report false.
	RecordIdempotentEffect(ctx context.Context, ref IdempotencyRef, eff IdempotentEffect) (bool, error)
}

// QuotaRows count the limited resources.
type QuotaRows interface {
	// TakeQuota counts one unit of a limited resource in its period and
	// reports false, taking nothing, when limit units are already counted.
	// It is atomic on its own: two transactions can never both take the last
	// unit.
	TakeQuota(ctx context.Context, key QuotaKey, limit int) (bool, error)

	// ReleaseQuota gives one unit back (a token revoked, a webhook
	// deactivated).
	ReleaseQuota(ctx context.Context, key QuotaKey) error
}

// SinglePage pages a list that can only ever hold one object.
func SinglePage[T interface{ comparable }](item T, p ListParams) Page[T] {
	one := 1
	if p.Cursor != uuid.Nil {
		return Page[T]{Items: []T{}}
	}
	return Page[T]{Items: []T{item}, TotalHits: &one}
}

// EmptyPage is the answer to a list that cannot hold anything.
func EmptyPage[T any](p ListParams) Page[T] {
	page := Page[T]{Items: []T{}}
	if p.Cursor == uuid.Nil {
		zero := 0
		page.TotalHits = &zero
	}
	return page
}

// OneReadViewer is a Storage that can run a function making exactly one
// read without a transaction around it: a single statement is its own
// consistent snapshot, so the transaction's begin and end would buy
// nothing. The hottest reads (GET of a charge, polled by every checkout)
// go through it when the engine offers it.
type OneReadViewer interface {
	// ViewOne runs fn, which must make exactly one read.
	ViewOne(ctx context.Context, fn func(Tx) error) error
}
