// Package servicetest builds the domain's services the way most tests need
// them: a SQLite database in the test's temporary directory, a JWT codec
// and a card vault with fixed keys, the sandbox acquirer, and services.New
// over them, all closed when the test ends.
//
// It is test support only: no production package may import it (it imports
// testing). It lives apart from package kessaitest because it imports the
// domain and the storage engine, which kessaitest must not, so that their
// own tests can use kessaitest without an import cycle; for the same reason
// the internal tests of package payment cannot use it.
package servicetest

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/aesgcm"
	"github.com/kessai/kessai/server/jwt"
	"github.com/kessai/kessai/server/kessaitest"
	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/services"
	"github.com/kessai/kessai/server/sandbox"
	"github.com/kessai/kessai/server/sqlite"
	"github.com/kessai/kessai/server/sqlite/sqlitetest"
)

// The fixed keys every Stack uses unless Configure replaces the secret key.
// They are test keys, known to anyone who reads this file.
var (
	JWTKey    = []byte("servicetest-jwt-signing-key-0123456789abcd")
	VaultKey  = []byte("servicetest-vault-key-0123456789")
	SecretKey = []byte("servicetest-secret-hash-key-0123456789ab")
)

// Options changes what New builds; the zero value is a service on the
// system clock, the sandbox acquirer answering at once, no public origin
// and an empty database of its own.
type Options struct {
	// Clock is the service's clock; nil is payment.SystemClock{}.
	Clock payment.Clock
	// Processor is the acquirer; nil is sandbox.Processor{}.
	Processor payment.Processor
	// PublicOrigin is the gateway's public origin (Config.PublicOrigin).
	PublicOrigin string
	// Path is the database file; "" is a new file in tb.TempDir(). Stacks
	// given the same path share a database, as instances of one gateway do.
	// A file that does not exist yet starts as a copy of an empty database
	// (sqlitetest), not migrated again.
	Path string
	// Storage, if set, wraps the database before the service gets it (to
	// observe or delay what the service asks of it); Stack.DB stays the
	// database itself.
	Storage func(*sqlite.DB) payment.Storage
	// EncodeEvent renders the resource of each event (Config.EncodeEvent).
	// Handler tests pass univapay.EncodeEvent, so that the service
	// records events and webhook deliveries as the gateway does; nil
	// records none.
	EncodeEvent payment.EventEncoder
	// WebhookSender sends webhook deliveries (Config.WebhookSender), e.g. a
	// webhookhttp.Sender with TestModeLocal to an httptest receiver (on
	// loopback, which test mode reaches only so); nil leaves them queued.
	WebhookSender payment.WebhookSender
	// Config is the starting configuration: New fills in SecretKey, Vault,
	// Processor, PublicOrigin, EncodeEvent and WebhookSender where it
	// leaves them empty, and PasswordCost with bcrypt.MinCost (the
	// gateway's is the default, TestGatewayHashesAtDefaultCost).
	Config payment.Config
	// Configure, if set, changes the configuration last, just before the
	// service is made.
	Configure func(*payment.Config)
}

// Stack is a service and what it was built from.
type Stack struct {
	DB      *sqlite.DB
	Service *services.Set
	Codec   *jwt.Codec
	Vault   *aesgcm.Vault
	Clock   payment.Clock
	// Config is the configuration the service was made with.
	Config payment.Config
}

// New builds a Stack; the database is closed when the test ends.
func New(tb testing.TB, opts Options) *Stack {
	tb.Helper()
	path := opts.Path
	if path == "" {
		path = filepath.Join(tb.TempDir(), sqlite.FileName)
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		sqlitetest.Place(tb, path)
	}
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	codec, err := jwt.NewCodec(JWTKey)
	if err != nil {
		tb.Fatal(err)
	}
	vault, err := aesgcm.New(VaultKey)
	if err != nil {
		tb.Fatal(err)
	}
	s := &Stack{DB: db, Codec: codec, Vault: vault, Clock: opts.Clock}
	if s.Clock == nil {
		s.Clock = payment.SystemClock{}
	}
	cfg := opts.Config
	if cfg.SecretKey == nil {
		cfg.SecretKey = SecretKey
	}
	if cfg.Vault == nil {
		cfg.Vault = vault
	}
	if cfg.Processor == nil {
		cfg.Processor = opts.Processor
	}
	if cfg.Processor == nil {
		cfg.Processor = sandbox.Processor{}
	}
	if cfg.PublicOrigin == "" {
		cfg.PublicOrigin = opts.PublicOrigin
	}
	if cfg.EncodeEvent == nil {
		cfg.EncodeEvent = opts.EncodeEvent
	}
	if cfg.WebhookSender == nil {
		cfg.WebhookSender = opts.WebhookSender
	}
	if cfg.PasswordCost == 0 {
		// A console password hash at the default cost takes a second of
		// CPU under the race detector, and most tests seed the demo user.
		cfg.PasswordCost = bcrypt.MinCost
	}
	if opts.Configure != nil {
		opts.Configure(&cfg)
	}
	var storage payment.Storage = db
	if opts.Storage != nil {
		storage = opts.Storage(db)
	}
	s.Config = cfg
	s.Service = services.New(storage, s.Clock, codec, cfg)
	return s
}

// Demo is the demo account SeedDemo made and its store's server caller.
type Demo struct {
	*payment.DemoAccount
	// Auth is the store's server credential, as an Authorization header.
	Auth   string
	Caller *payment.Caller
}

// SeedDemo seeds the demo account with an app token for domains and
// authenticates its server credential.
func (s *Stack) SeedDemo(tb testing.TB, domains ...string) *Demo {
	tb.Helper()
	ctx := context.Background()
	acct, err := s.Service.Console.SeedDemo(ctx, domains)
	if err != nil {
		tb.Fatal(err)
	}
	if acct == nil {
		tb.Fatal("SeedDemo seeded nothing")
	}
	d := &Demo{DemoAccount: acct, Auth: "Bearer " + acct.Token.Secret + "." + acct.Token.JWT}
	if d.Caller, err = s.Service.Access.Authenticate(ctx, d.Auth, ""); err != nil {
		tb.Fatal(err)
	}
	return d
}

// Pay makes a one-time card token and a charge on it as c, runs the worker
// until the charge is authorised or final, and returns it as stored.
func Pay(tb testing.TB, svc *services.Set, c *payment.Caller, cardNumber string, amount int64, currency string, meta payment.Metadata) *payment.Charge {
	tb.Helper()
	ctx := context.Background()
	tt, err := svc.Tokens.CreateToken(ctx, c, payment.NewToken{
		PaymentType: payment.PaymentTypeCard, Type: payment.OneTime, Email: "shopper@example.com",
		Card: &payment.CardInput{Cardholder: "TARO YAMADA", Number: cardNumber, ExpMonth: 12, ExpYear: 2039, CVV: "123"},
	})
	if err != nil {
		tb.Fatal(err)
	}
	ch, err := svc.Charging.CreateCharge(ctx, c, payment.NewCharge{TokenID: tt.ID, Amount: amount, Currency: currency, Metadata: meta})
	if err != nil {
		tb.Fatal(err)
	}
	return AwaitCharge(tb, svc, c, ch.StoreID, ch.ID, "the charge to leave pending", Settled)
}

// AwaitCharge runs the worker (ProcessPending) and reads the charge as c
// until done holds for it, and returns it then; after 5 s it fails the
// test, saying it was waiting for what.
func AwaitCharge(tb testing.TB, svc *services.Set, c *payment.Caller, storeID, id uuid.UUID, what string, done func(*payment.Charge) bool) *payment.Charge {
	tb.Helper()
	ctx := context.Background()
	var got *payment.Charge
	kessaitest.WaitFor(tb, 5*time.Second, what, func() bool {
		if _, err := svc.Work.ProcessPending(ctx, 50); err != nil {
			tb.Fatal(err)
		}
		var err error
		if got, err = svc.Charging.Charge(ctx, c, storeID, id, 0); err != nil {
			tb.Fatal(err)
		}
		return done(got)
	})
	return got
}

// Awaiting holds for a charge that awaits its shopper: a wallet's
// payment or a 3-D Secure challenge.
func Awaiting(ch *payment.Charge) bool { return ch.Status == payment.ChargeAwaiting }

// Settled holds for a charge the worker is done with: final, or
// authorised.
func Settled(ch *payment.Charge) bool {
	return ch.Status.Final() || ch.Status == payment.ChargeAuthorized
}
