package payment

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
)

// ConsoleSession is one signed-in browser. Its token exists only in the
// browser's cookie; storage keeps a keyed hash of it, so that a leaked
// table signs nobody in.
type ConsoleSession struct {
	TokenHash  []byte
	UserID     uuid.UUID
	MerchantID uuid.UUID
	// Mode is what the console shows and acts on: test or live objects.
	Mode       Mode
	CreatedOn  time.Time
	LastSeenOn time.Time
}

// PasswordReset is one "forgot my password" link. Like a session, only a
// keyed hash of its token is stored.
type PasswordReset struct {
	TokenHash []byte
	UserID    uuid.UUID
	CreatedOn time.Time
	ExpiresOn time.Time
	UsedOn    *time.Time
}

// The console's timeouts and password rules.
const (
	// ConsoleIdleTimeout ends a session nobody used for this long.
	ConsoleIdleTimeout = 30 * time.Minute
	// ConsoleAbsoluteTimeout ends every session this long after sign-in,
	// however busy.
	ConsoleAbsoluteTimeout = 12 * time.Hour
	// ConsoleTouchEvery is how stale a session's LastSeenOn may get
	// before a request writes it again: a write for every page would
	// make reading the console as costly as changing it.
	ConsoleTouchEvery = time.Minute
	// PasswordResetTTL is how long a reset link works.
	PasswordResetTTL = 30 * time.Minute
	// PasswordResetsPerDay is the resource limit of reset links per
	// e-mail address and UTC day.
	PasswordResetsPerDay = 5
	// MinPasswordLength and MaxPasswordLength bound a new password, in
	// bytes: bcrypt reads no further than 72.
	MinPasswordLength = 10
	MaxPasswordLength = 72
	// MaxSignInInput bounds what a sign-in form may make the service
	// hash: anything longer cannot be anyone's password.
	MaxSignInInput = 1024
)

// PasswordResetQuota is the resource limit on reset links (README, "Rate
// limits and other limits"): counted per address, whether or not a user
// has it, so that the answer says nothing about which addresses exist.
func PasswordResetQuota() Quota {
	return Quota{Resource: "password_reset_token", Limit: PasswordResetsPerDay, Daily: true}
}

// Throttle counts attempts at what a guesser repeats (passwords, reset
// requests). Take counts one attempt against every key at once, or, when
// any key's allowance is spent, counts none and answers how long to wait.
type Throttle interface {
	Take(ctx context.Context, keys []ThrottleKey) (wait time.Duration, err error)
}

// ThrottleKey is one allowance: Burst attempts at once, given back at
// PerMinute a minute.
type ThrottleKey struct {
	Key       string
	Burst     int
	PerMinute int
}

// PasswordResetMail is a reset link on its way to its user.
type PasswordResetMail struct {
	To        string
	Link      string
	Locale    string
	ExpiresOn time.Time
}

// ResetMailer sends reset links. The service calls it after the link is
// committed, away from the request, so that neither its timing nor its
// errors tell the requester whether the address has a user.
type ResetMailer interface {
	SendPasswordReset(ctx context.Context, m PasswordResetMail) error
}

// SignInRequest is what the sign-in form sends, and the address it came
// from.
type SignInRequest struct {
	Email    string
	Password string
	ClientIP string
}

// NormalizeEmail is how the console compares addresses: without
// surrounding blanks and without regard to ASCII case.
func NormalizeEmail(email string) string {
	return asciiLower(strings.TrimSpace(email))
}

// PasswordResetRequest asks for a reset link: the address, and the
// language and client address of the request.
type PasswordResetRequest struct {
	Email    string
	Locale   string
	ClientIP string
}

// PasswordResetPath is where reset links point on the gateway's origin,
// followed by the token.
const PasswordResetPath = "/console/reset/"

// DemoEmail is the console login of the merchant created on first start.
const DemoEmail = "demo@kessai.test"

// DemoAccount is what first start hands to a new user: a merchant, its
// console login, a store and a test-mode token for it.
type DemoAccount struct {
	MerchantID      uuid.UUID
	StoreID         uuid.UUID
	ConsoleEmail    string
	ConsolePassword string
	Token           *IssuedAppToken
}
