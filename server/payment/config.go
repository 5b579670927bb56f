package payment

import (
	"log/slog"
	"time"
)

// Config is what a Service needs besides its parts.
type Config struct {
	SecretKey    []byte
	PublicOrigin string
	Limits       ResourceLimits
	// Vault encrypts card data at rest; Processor is the acquirer.
	Vault     CardVault
	Processor Processor
	// AuthCacheTTL is how long a looked-up app token is trusted without
	// reading it again; it bounds how long a token revoked through another
	// instance keeps working. Default 2 s.
	AuthCacheTTL time.Duration
	// LongPollRecheck is how often a long poll re-reads the object it
	// waits on, for changes made by another instance (changes made here
	// wake it at once). Default 1 s.
	LongPollRecheck time.Duration
	// WorkConcurrency is how many items of work (acquirer calls) the
	// worker keeps in flight. Default 512.
	WorkConcurrency int
	// WorkLease is how long a claimed item stays the worker's without a
	// renewal: how long the items of a crashed instance wait before
	// another takes them. Default 10 s.
	WorkLease time.Duration
	// WalletExpiry is how long a wallet payment waits for the shopper
	// before it fails with 327 (CONFIRMATION_PERIOD_EXPIRED). Default 5
	// minutes.
	WalletExpiry time.Duration
	// EncodeEvent renders the resource of each event as the API shows it.
	// Without it no events are recorded (tests of the rules alone).
	EncodeEvent EventEncoder
	// WebhookSender sends webhook deliveries.
	WebhookSender WebhookSender
	// ChangeFeed links the processes that share one database (see
	// RunChangeFeed); nil for a process alone on its store.
	ChangeFeed ChangeFeed
	// Throttle holds back repeated console sign-ins and reset requests
	// (nil: no throttling, for tests of other rules).
	Throttle Throttle
	// ResetMailer sends password reset links (nil: none are sent).
	ResetMailer ResetMailer
	// Logger records what goes wrong away from a request (default:
	// slog.Default()).
	Logger *slog.Logger
	// Meter is told what the service did, for metrics (default: nothing
	// counts it).
	Meter Meter
	// PasswordCost is the bcrypt cost of console password hashes: 0, as
	// the gateway leaves it (TestGatewayHashesAtDefaultCost), is
	// bcrypt.DefaultCost. Only tests lower it, to bcrypt.MinCost: under
	// the race detector one hash at the default cost takes a second of CPU.
	PasswordCost int
}
