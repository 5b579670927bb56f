package payment

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Idempotency keys, as UnivaPay's SDKs send them and as Stripe stores them.
//
// A client may send an Idempotency-Key with a request that changes
// something. The first request with a key in an account reserves it, runs,
// and its answer is stored; a retry with the same key is answered with the
// stored answer instead of running again. The rules:
//
//   - Keys are scoped to the caller's account (IdempotencyScope): merchant,
//     store and mode, so two stores, or test and live traffic, never share
//     a key.
//   - A key names one request: its method, target (path and query), the
//     SHA-256 of its body and whether the caller used the token's secret,
//     folded into a fingerprint. The same key with another fingerprint is
//     IDEMPOTENCY_KEY_CONFLICT.
//   - While the first request runs, the key is in flight: a second request
//     with it is IDEMPOTENCY_KEY_CONFLICT and never runs. A reservation
//     older than the lock timeout is taken to be abandoned (the gateway
//     crashed mid-request) and the next request with the same fingerprint
//     takes it over. The first request, should it finish after all, then
//     finds its reservation lost and stores nothing.
//   - A key expires TTL after its answer was stored (or after it was
//     reserved, while in flight); from then on it is free again, and
//     expired records are swept away.
//
// A crash between the request's change and its stored answer: the answer
// is stored in a short transaction of its own after the request ran, so a
// gateway that dies in between leaves the key in flight with its change
// made. What keeps a retry from making it again is the effect: a request
// that makes a payment object (a charge, refund, cancel, capture or
// subscription) records what it made on its key (IdempotentEffect) in the
// transaction that makes it, and only while its reservation still holds
// the key's lock (Tx.RecordIdempotentEffect): the object and the note of
// it commit together or not at all. A takeover moves the lock first, in
// one conditional statement that keeps the effect, then reads the effect
// under its own lock; from the move on, the old holder can commit nothing,
// so what the takeover reads is all it will ever find. With an effect, the
// retry does not run: it is answered with the object made (the HTTP layer
// renders it as the request would have) and that answer is stored. Without
// one, nothing was made and the request runs. An old holder that was only
// slow, and commits after the takeover, fails with IDEMPOTENCY_KEY_CONFLICT
// and its transaction rolls back: one key never makes two objects. An
// expired key is free again, its effect forgotten with its answer.
//
// Which answers are worth storing is the HTTP layer's call: the domain
// stores what it is given, or releases the key on request.

// MaxIdempotencyKeyLength is the longest key accepted, in characters.
const MaxIdempotencyKeyLength = 255

// IdempotencyKeyField is the field a VALIDATION_ERROR about the key names.
const IdempotencyKeyField = "idempotency_key"

// Defaults of IdempotencyConfig.
const (
	DefaultIdempotencyTTL         = 24 * time.Hour
	DefaultIdempotencyLockTimeout = 60 * time.Second
)

// IdempotencyState is where a key's request stands.
type IdempotencyState string

// The states of a key.
const (
	// IdempotencyInFlight: reserved, its request is running (or the
	// gateway died while it was).
	IdempotencyInFlight IdempotencyState = "in_flight"
	// IdempotencyCompleted: the request's answer is stored.
	IdempotencyCompleted IdempotencyState = "completed"
)

// IdempotentResponse is a stored answer, replayed byte for byte.
type IdempotentResponse struct {
	Status int
	// Header holds the few headers that belong to the answer itself
	// (Content-Type, Location, ...), never per-request ones such as the
	// request id or CORS.
	Header map[string]string
	Body   []byte
}

// IdempotencyRecord is one key as stored.
type IdempotencyRecord struct {
	Scope       string
	Key         string
	Fingerprint []byte
	// Lock identifies one reservation: completing, releasing or taking
	// over a record only succeeds while it still holds the lock that was
	// read, so two holders never overwrite each other.
	Lock      string
	State     IdempotencyState
	CreatedOn time.Time
	LockedOn  time.Time
	ExpiresOn time.Time
	// Response is set once State is IdempotencyCompleted.
	Response *IdempotentResponse
}

// EffectKind is the kind of object a request made under its key.
type EffectKind string

// The kinds of effects: the payment objects whose creation moves money or
// is answered with the object made.
const (
	EffectCharge       EffectKind = "charge"
	EffectRefund       EffectKind = "refund"
	EffectCancel       EffectKind = "cancel"
	EffectCapture      EffectKind = "capture"
	EffectSubscription EffectKind = "subscription"
)

// IdempotentEffect is what a request made under its key, recorded in the
// transaction that made it: what a retry after a crash is answered with.
type IdempotentEffect struct {
	Kind EffectKind
	// StoreID is the object's store.
	StoreID uuid.UUID
	// ChargeID is the charge a refund, cancel or capture is of (uuid.Nil
	// for a charge or a subscription).
	ChargeID uuid.UUID
	// ID is the object made; for a capture, the charge captured.
	ID uuid.UUID
}

// IdempotencyRef names the reservation a request runs under, for the
// service method that records its effect (RecordIdempotentEffect).
type IdempotencyRef struct {
	Scope string
	Key   string
	Lock  string
}

// IdempotencyStore is what a storage engine provides for idempotency keys.
// Keys are reserved, taken over and completed in their own short
// transactions around a request; only the effect is written inside the
// request's (Tx.RecordIdempotentEffect), on the same table, so that the
// object made and the note of it commit together.
type IdempotencyStore interface {
	// Reserve inserts rec unless a record with its Scope and Key exists,
	// atomically. reserved reports whether rec was inserted; otherwise
	// existing is the record found.
	Reserve(ctx context.Context, rec *IdempotencyRecord) (existing *IdempotencyRecord, reserved bool, err error)
	// Replace overwrites the record of rec.Scope and rec.Key with rec if
	// it still holds lock, and reports whether it did. The record's
	// effect is cleared: it is how an expired key is reserved anew.
	Replace(ctx context.Context, lock string, rec *IdempotencyRecord) (bool, error)
	// TakeOver moves the in-flight reservation of rec.Scope and rec.Key
	// from lock to rec.Lock, with rec's LockedOn and ExpiresOn, if it is
	// still in flight under lock; its fingerprint, creation time and
	// effect stay. taken reports whether it moved; effect is then the
	// effect recorded on the record (nil when none), read once the lock
	// had moved, so that no holder of the old lock can record one after.
	TakeOver(ctx context.Context, lock string, rec *IdempotencyRecord) (effect *IdempotentEffect, taken bool, err error)
	// Complete stores the answer of the reservation holding lock, marks
	// it completed and sets its expiry. It reports false, changing
	// nothing, when the reservation is no longer held.
	Complete(ctx context.Context, scope, key, lock string, resp *IdempotentResponse, expiresOn time.Time) (bool, error)
	// Release deletes the record if it still holds lock and has no
	// effect. A record holding lock with an effect is kept, and its
	// effect returned; otherwise the effect is nil.
	Release(ctx context.Context, scope, key, lock string) (*IdempotentEffect, error)
	// DeleteExpired deletes the records that expire at or before before,
	// and returns how many it deleted.
	DeleteExpired(ctx context.Context, before time.Time) (int, error)
}

// IdempotencyConfig tunes the rules.
type IdempotencyConfig struct {
	// TTL is how long a stored answer is replayed; default 24 h.
	TTL time.Duration
	// LockTimeout is how long a reservation may stay in flight before it
	// is taken to be abandoned; default 60 s. It should exceed the longest
	// request (the HTTP server's write timeout): a request taken over
	// while it still runs makes nothing (RecordIdempotentEffect), but
	// answers IDEMPOTENCY_KEY_CONFLICT.
	LockTimeout time.Duration
	// FingerprintKey keys the request fingerprints (HMAC-SHA-256), so that
	// the hash of a body holding card data cannot be tested against
	// guesses by someone holding only the database. Optional.
	FingerprintKey []byte
	// Meter is told how long each of the store's statements took, as
	// TransactionIdempotency (nil: nothing is).
	Meter Meter
}

// Idempotency holds the rules of idempotency keys.
type Idempotency struct {
	store IdempotencyStore
	clock Clock
	cfg   IdempotencyConfig
}

// NewIdempotency returns the rules over a store.
func NewIdempotency(store IdempotencyStore, clock Clock, cfg IdempotencyConfig) *Idempotency {
	if cfg.TTL <= 0 {
		cfg.TTL = DefaultIdempotencyTTL
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = DefaultIdempotencyLockTimeout
	}
	if cfg.Meter != nil {
		store = meteredIdempotencyStore{store, cfg.Meter}
	}
	return &Idempotency{store: store, clock: clock, cfg: cfg}
}

// meteredIdempotencyStore times each statement of an IdempotencyStore for
// the Meter: they are the storage work of every request that carries a
// key, beside the service's transactions.
type meteredIdempotencyStore struct {
	IdempotencyStore
	meter Meter
}

// timed tells the Meter how long since start; a stopwatch, not a rule's
// time.
func (m meteredIdempotencyStore) timed(start time.Time) {
	m.meter.Transaction(TransactionIdempotency, time.Since(start))
}

func (m meteredIdempotencyStore) Reserve(ctx context.Context, rec *IdempotencyRecord) (*IdempotencyRecord, bool, error) {
	defer m.timed(time.Now())
	return m.IdempotencyStore.Reserve(ctx, rec)
}

func (m meteredIdempotencyStore) Replace(ctx context.Context, lock string, rec *IdempotencyRecord) (bool, error) {
	defer m.timed(time.Now())
	return m.IdempotencyStore.Replace(ctx, lock, rec)
}

func (m meteredIdempotencyStore) TakeOver(ctx context.Context, lock string, rec *IdempotencyRecord) (*IdempotentEffect, bool, error) {
	defer m.timed(time.Now())
	return m.IdempotencyStore.TakeOver(ctx, lock, rec)
}

func (m meteredIdempotencyStore) Complete(ctx context.Context, scope, key, lock string, resp *IdempotentResponse, expiresOn time.Time) (bool, error) {
	defer m.timed(time.Now())
	return m.IdempotencyStore.Complete(ctx, scope, key, lock, resp, expiresOn)
}

func (m meteredIdempotencyStore) Release(ctx context.Context, scope, key, lock string) (*IdempotentEffect, error) {
	defer m.timed(time.Now())
	return m.IdempotencyStore.Release(ctx, scope, key, lock)
}

func (m meteredIdempotencyStore) DeleteExpired(ctx context.Context, before time.Time) (int, error) {
	defer m.timed(time.Now())
	return m.IdempotencyStore.DeleteExpired(ctx, before)
}

// IdempotencyScope is the account a caller's keys live in: its merchant,
// its store (none for a merchant token) and its mode.
func IdempotencyScope(c *Caller) string {
	s := "merchant:" + c.MerchantID().String()
	if !c.IsMerchantToken() {
		s += "/store:" + c.StoreID().String()
	}
	return s + "/mode:" + string(c.Mode())
}

// ValidIdempotencyKey checks a key: present and at most
// MaxIdempotencyKeyLength characters. Any printable characters are allowed
// (PHP sends uniqid values such as "5f1a2b3c4d5e6.12345678"), but not a card
// number: keys are stored in the clear. They are stored as text, which
// PostgreSQL takes only in UTF-8, and a header may carry any byte: a key
// that is not UTF-8 is bad input, not a failure of the store.
func ValidIdempotencyKey(key string) error {
	if key == "" {
		return Invalid(IdempotencyKeyField, ReasonRequired)
	}
	if !utf8.ValidString(key) {
		return Invalid(IdempotencyKeyField, ReasonInvalidFormat)
	}
	var v Validation
	CheckText(&v, IdempotencyKeyField, key, MaxIdempotencyKeyLength)
	return v.Err()
}

// IdempotentRequest is a request carrying a key.
type IdempotentRequest struct {
	Scope string
	Key   string
	// Method and Target (path and query, as sent) identify the operation.
	Method string
	Target string
	// WithSecret: whether the caller used the token's secret. A browser
	// caller never gets the replay of a server call's answer.
	WithSecret bool
	Body       []byte
}

// Fingerprint identifies the request a key was first used for.
func (i *Idempotency) Fingerprint(r IdempotentRequest) []byte {
	body := sha256.Sum256(r.Body)
	m := hmac.New(sha256.New, i.cfg.FingerprintKey)
	for _, part := range []string{r.Method, r.Target, strconv.FormatBool(r.WithSecret)} {
		// Length-prefixed, so no two different requests share an input.
		m.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	m.Write(body[:])
	return m.Sum(nil)
}

// ErrIdempotencyLockLost is what completing or releasing a reservation
// answers when it was taken over as abandoned, or has expired, meanwhile.
var ErrIdempotencyLockLost = errors.New("idempotency: reservation lost")

// IdempotencyReservation is a key reserved for one request: it runs, then
// Complete stores its answer, or Release frees the key for a retry. A
// reservation taken over from a request that made something (Effect) is
// not run again: it is answered with what was made.
type IdempotencyReservation struct {
	i      *Idempotency
	ref    IdempotencyRef
	effect *IdempotentEffect
}

// Ref names the reservation, for the service method whose transaction
// records what the request makes.
func (res *IdempotencyReservation) Ref() *IdempotencyRef {
	ref := res.ref
	return &ref
}

// Effect is what an earlier run of the request made under the key before
// it was abandoned (nil when nothing): the request must not run again,
// but be answered with this object.
func (res *IdempotencyReservation) Effect() *IdempotentEffect { return res.effect }

// maxReserveAttempts bounds the retries when another request wins a race
// for an expired or abandoned record; losing that often means the key is
// busy, which is a conflict.
const maxReserveAttempts = 3

// Begin looks a request's key up. Exactly one of its answers is set:
//   - a reservation: the key was free (or expired, or abandoned); run the
//     request, then Complete or Release, unless the reservation has an
//     Effect (an abandoned run made something): then answer with that
//     object and Complete;
//   - a stored answer: the request ran before; answer with it;
//   - an error: IDEMPOTENCY_KEY_CONFLICT when the key belongs to another
//     request or its request is still running, VALIDATION_ERROR for a bad
//     key, anything else when the store failed.
func (i *Idempotency) Begin(ctx context.Context, r IdempotentRequest) (*IdempotencyReservation, *IdempotentResponse, error) {
	if err := ValidIdempotencyKey(r.Key); err != nil {
		return nil, nil, err
	}
	now := i.clock.Now()
	rec := &IdempotencyRecord{
		Scope:       r.Scope,
		Key:         r.Key,
		Fingerprint: i.Fingerprint(r),
		Lock:        NewID().String(),
		State:       IdempotencyInFlight,
		CreatedOn:   now,
		LockedOn:    now,
		ExpiresOn:   now.Add(i.cfg.TTL),
	}
	for range maxReserveAttempts {
		existing, reserved, err := i.store.Reserve(ctx, rec)
		if err != nil {
			return nil, nil, err
		}
		if reserved {
			return i.reservation(rec, nil), nil, nil
		}
		switch {
		case !now.Before(existing.ExpiresOn):
			// Expired but not swept yet: the key is free again, and
			// what it made is no longer its request's answer.
			ok, err := i.store.Replace(ctx, existing.Lock, rec)
			if err != nil {
				return nil, nil, err
			}
			if ok {
				return i.reservation(rec, nil), nil, nil
			}
			continue // someone else changed the record first: look again
		case !hmac.Equal(existing.Fingerprint, rec.Fingerprint):
			return nil, nil, Errorf(CodeIdempotencyConflict,
				"the idempotency key was used with a different request")
		case existing.State == IdempotencyCompleted && existing.Response != nil:
			return nil, existing.Response, nil
		case now.Sub(existing.LockedOn) < i.cfg.LockTimeout:
			return nil, nil, Errorf(CodeIdempotencyConflict,
				"a request with the same idempotency key is in progress")
		}
		// In flight for longer than any request runs: abandoned. Whatever
		// the abandoned run committed under its lock is read once the
		// lock is ours, and is the answer instead of a second run.
		effect, ok, err := i.store.TakeOver(ctx, existing.Lock, rec)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			return i.reservation(rec, effect), nil, nil
		}
		// Someone else changed the record first: look again.
	}
	return nil, nil, Errorf(CodeIdempotencyConflict, "a request with the same idempotency key is in progress")
}

func (i *Idempotency) reservation(rec *IdempotencyRecord, effect *IdempotentEffect) *IdempotencyReservation {
	return &IdempotencyReservation{i: i, ref: IdempotencyRef{Scope: rec.Scope, Key: rec.Key, Lock: rec.Lock}, effect: effect}
}

// Complete stores the request's answer for TTL. It answers
// ErrIdempotencyLockLost when the reservation was taken over meanwhile.
func (res *IdempotencyReservation) Complete(ctx context.Context, resp *IdempotentResponse) error {
	expires := res.i.clock.Now().Add(res.i.cfg.TTL)
	ok, err := res.i.store.Complete(ctx, res.ref.Scope, res.ref.Key, res.ref.Lock, resp, expires)
	if err != nil {
		return err
	}
	if !ok {
		return ErrIdempotencyLockLost
	}
	return nil
}

// Release frees the key without storing anything, so that a retry runs
// the request again; a reservation taken over meanwhile is left alone.
// But a request that made something under the key (its transaction
// committed, then its answer failed) must not run again: the key stays
// reserved and Release returns what was made, to be answered with (a
// retry past the lock timeout would find it too).
func (res *IdempotencyReservation) Release(ctx context.Context) (*IdempotentEffect, error) {
	return res.i.store.Release(ctx, res.ref.Scope, res.ref.Key, res.ref.Lock)
}

// Sweep deletes the expired keys and returns how many there were. Call it
// periodically; an expired key is already free without it.
func (i *Idempotency) Sweep(ctx context.Context) (int, error) {
	return i.store.DeleteExpired(ctx, i.clock.Now())
}

// RecordEffect notes on the key a request runs under (ref; nil for a
// request without one) what the transaction makes, in that transaction.
// A reservation taken over meanwhile fails it with IDEMPOTENCY_KEY_CONFLICT,
// so that it rolls back: the retry that took the key over runs the request
// itself, and one key never makes two objects.
func RecordEffect(ctx context.Context, tx Tx, ref *IdempotencyRef, eff IdempotentEffect) error {
	if ref == nil {
		return nil
	}
	held, err := tx.RecordIdempotentEffect(ctx, *ref, eff)
	if err != nil {
		return err
	}
	if !held {
		return Errorf(CodeIdempotencyConflict,
			"the idempotency key was taken over by a retry of this request, which runs it instead")
	}
	return nil
}
