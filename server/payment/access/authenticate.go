// Package access decides who may act, and as whom: the API's app tokens
// and Authenticate, the callers of the gateway's own pages (BrowserCaller)
// and of the merchant console (ConsoleCaller), the console's accounts
// (sign-in, sessions, password resets) and the demo account. A Caller
// made here is what every other capability checks; none of them reads a
// credential itself.
package access

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// Service decides who may act, and as whom: app tokens and the API's
// Authenticate, and the callers of the gateway's own pages.
type Service struct {
	db    *outbox.DB
	clock payment.Clock
	codec payment.TokenCodec
	// secretKey keys the hashes of app-token secrets: a leaked database
	// alone cannot be used to test guesses.
	secretKey []byte
	// publicOrigin is the gateway's own origin; its pages (the widget frame,
	// the link form) may always use a store's browser token.
	publicOrigin string
	limits       payment.ResourceLimits
	auth         authCache
	logger       *slog.Logger
}

// Console is the merchant console's accounts: sign-in, sessions, password
// changes and resets, the caller a session acts as, and the demo account,
// whose app token it issues through the keys (Service).
type Console struct {
	db    *outbox.DB
	keys  *Service
	clock payment.Clock
	// secretKey keys the hashes of session and reset tokens.
	secretKey    []byte
	publicOrigin string
	// throttler holds back guessers of console passwords; resetMailer
	// sends reset links, mailing counts those under way.
	throttler   payment.Throttle
	resetMailer payment.ResetMailer
	mailing     sync.WaitGroup
	logger      *slog.Logger
	// passwordCost is the bcrypt cost of the hashes the console makes,
	// and of dummyHash.
	passwordCost int
	// dummyHash is compared with the password of a sign-in for an address
	// that has no user, so that the answer takes as long as for one that
	// has; made on the first password check of any kind, which so takes
	// as long whether the address has a user or not.
	dummyHash struct {
		once sync.Once
		hash []byte
	}
}

// New returns the access rules over db: the keys (Service) and the
// console's accounts. The keys hear of the app tokens other processes
// revoke (db's change feed).
func New(db *outbox.DB, clock payment.Clock, codec payment.TokenCodec, cfg payment.Config) (*Service, *Console) {
	if cfg.AuthCacheTTL <= 0 {
		cfg.AuthCacheTTL = 2 * time.Second
	}
	if cfg.Limits == (payment.ResourceLimits{}) {
		cfg.Limits = payment.DefaultResourceLimits()
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = bcrypt.DefaultCost
	}
	logger := cmp.Or(cfg.Logger, slog.Default())
	origin := strings.TrimRight(cfg.PublicOrigin, "/")
	s := &Service{
		db:           db,
		clock:        clock,
		codec:        codec,
		secretKey:    cfg.SecretKey,
		publicOrigin: origin,
		limits:       cfg.Limits,
		logger:       logger,
		auth:         authCache{ttl: cfg.AuthCacheTTL, entries: map[uuid.UUID]authEntry{}, claims: map[string]payment.AppTokenClaims{}},
	}
	db.OnRevokedElsewhere(s.markAppTokenRevoked)
	c := &Console{
		db:           db,
		keys:         s,
		clock:        clock,
		secretKey:    cfg.SecretKey,
		publicOrigin: origin,
		throttler:    cfg.Throttle,
		resetMailer:  cfg.ResetMailer,
		logger:       logger,
		passwordCost: cfg.PasswordCost,
	}
	return s, c
}

func (s *Service) appTokenQuota() payment.Quota {
	return payment.Quota{Resource: "app_token", Limit: s.limits.AppTokens}
}

// Authenticate checks an Authorization header value and the request's
// Origin. It answers AUTH_HEADER_MISSING, INVALID_APP_TOKEN or
// INVALID_DOMAIN, never anything that tells a guesser which part was wrong.
func (s *Service) Authenticate(ctx context.Context, authorization, origin string) (*payment.Caller, error) {
	authorization = strings.TrimSpace(authorization)
	if authorization == "" {
		return nil, payment.Errorf(payment.CodeAuthHeaderMissing, "the Authorization header is missing")
	}
	invalid := payment.Errorf(payment.CodeInvalidAppToken, "invalid app token")
	scheme, credential, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, invalid
	}
	credential = strings.TrimSpace(credential)
	var secret, jwt string
	switch parts := strings.Split(credential, "."); len(parts) {
	case 3:
		jwt = credential
	case 4:
		secret, jwt = parts[0], strings.Join(parts[1:], ".")
		if secret == "" {
			return nil, invalid
		}
	default:
		return nil, invalid
	}
	claims, err := s.parseJWT(jwt)
	if err != nil {
		return nil, invalid
	}
	tok, err := s.lookupAppToken(ctx, claims.ID)
	if err != nil {
		if payment.IsNotFound(err) {
			return nil, invalid
		}
		return nil, err
	}
	if !tok.Active() || tok.MerchantID != claims.MerchantID || tok.StoreID != claims.StoreID {
		return nil, invalid
	}
	if secret != "" {
		if !hmac.Equal(s.hashSecret(secret), tok.SecretHash) {
			return nil, invalid
		}
		return payment.NewCaller(tok, true, origin), nil
	}
	// Without a secret the token is a browser credential: it only works
	// from a page on one of its domains (or on the gateway's own pages).
	if tok.IsMerchantToken() {
		return nil, invalid
	}
	if !s.originAllowed(tok, origin) {
		return nil, payment.Errorf(payment.CodeInvalidDomain, "the request's origin is not one of the app token's domains")
	}
	return payment.NewCaller(tok, false, origin), nil
}

// browserAppToken checks a store app token meant for browser use (the
// widget's appId): signature, not revoked, a store token.
func (s *Service) browserAppToken(ctx context.Context, jwt string) (*payment.AppToken, error) {
	invalid := payment.Errorf(payment.CodeInvalidAppToken, "invalid app token")
	claims, err := s.parseJWT(strings.TrimSpace(jwt))
	if err != nil {
		return nil, invalid
	}
	tok, err := s.lookupAppToken(ctx, claims.ID)
	if err != nil {
		if payment.IsNotFound(err) {
			return nil, invalid
		}
		return nil, err
	}
	if !tok.Active() || tok.IsMerchantToken() || tok.StoreID != claims.StoreID {
		return nil, invalid
	}
	return tok, nil
}

func (s *Service) originAllowed(tok *payment.AppToken, origin string) bool {
	if origin == "" {
		return false
	}
	if s.publicOrigin != "" && strings.EqualFold(strings.TrimRight(origin, "/"), s.publicOrigin) {
		return true
	}
	return payment.OriginAllowed(tok.Domains, origin)
}

// OriginAllowedFor reports whether the caller's browser origin may read the
// API's answers (CORS): only the token's domains and the gateway itself.
func (s *Service) OriginAllowedFor(c *payment.Caller, origin string) bool {
	return s.originAllowed(c.Token(), origin)
}

func (s *Service) hashSecret(secret string) []byte {
	m := hmac.New(sha256.New, s.secretKey)
	m.Write([]byte(secret))
	return m.Sum(nil)
}

// authCache keeps looked-up app tokens for a short time so that an API call
// costs a map lookup rather than a database read, while a revocation made
// elsewhere takes effect within ttl. A revocation made here is immediate:
// it leaves a tombstone that a lookup racing with it cannot overwrite.
//
// It also remembers which JWT strings have already been verified, so that
// the signature check and claim parsing run once per token, not once per
// request: a JWT's claims never change, only the token's state does.
type authCache struct {
	ttl     time.Duration
	mu      sync.RWMutex
	entries map[uuid.UUID]authEntry
	claims  map[string]payment.AppTokenClaims
}

type authEntry struct {
	token   *payment.AppToken
	fetched time.Time
	revoked bool
}

// authCacheMax bounds each map; past it the map starts over, which only
// costs database reads and signature checks.
const authCacheMax = 100_000

// parseJWT verifies a JWT, or recalls that it was verified before.
func (s *Service) parseJWT(jwt string) (payment.AppTokenClaims, error) {
	s.auth.mu.RLock()
	c, ok := s.auth.claims[jwt]
	s.auth.mu.RUnlock()
	if ok {
		return c, nil
	}
	c, err := s.codec.Parse(jwt)
	if err != nil {
		return c, err
	}
	s.auth.mu.Lock()
	if len(s.auth.claims) >= authCacheMax {
		s.auth.claims = map[string]payment.AppTokenClaims{}
	}
	s.auth.claims[jwt] = c
	s.auth.mu.Unlock()
	return c, nil
}

func (s *Service) lookupAppToken(ctx context.Context, id uuid.UUID) (*payment.AppToken, error) {
	now := s.clock.Now()
	s.auth.mu.RLock()
	e, ok := s.auth.entries[id]
	s.auth.mu.RUnlock()
	fresh := ok && now.Sub(e.fetched) < s.auth.ttl && now.Sub(e.fetched) >= 0
	if fresh && e.revoked {
		return nil, payment.NotFound("app token")
	}
	if fresh {
		return e.token, nil
	}
	var tok *payment.AppToken
	err := s.db.View(ctx, func(tx payment.Tx) error {
		var err error
		tok, err = tx.AppToken(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.auth.mu.Lock()
	defer s.auth.mu.Unlock()
	if cur, ok := s.auth.entries[id]; ok && cur.revoked && now.Sub(cur.fetched) < s.auth.ttl {
		// Revoked here while this read was under way: the read is stale.
		return nil, payment.NotFound("app token")
	}
	if len(s.auth.entries) >= authCacheMax {
		s.auth.entries = map[uuid.UUID]authEntry{}
	}
	s.auth.entries[id] = authEntry{token: tok, fetched: now}
	return tok, nil
}

// forgetAppToken records a revocation made on this instance, and tells
// the other processes.
func (s *Service) forgetAppToken(id uuid.UUID) {
	s.markAppTokenRevoked(id)
	s.db.AppTokenRevoked(id)
}

// markAppTokenRevoked makes this process refuse an app token at once,
// rather than once its cache entry expires.
func (s *Service) markAppTokenRevoked(id uuid.UUID) {
	s.auth.mu.Lock()
	s.auth.entries[id] = authEntry{fetched: s.clock.Now(), revoked: true}
	s.auth.mu.Unlock()
}

// newSecret returns a high-entropy secret: 32 random bytes, URL-safe, with
// no dots so that "{secret}.{jwt}" splits unambiguously.
func newSecret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashPassword hashes a console password with bcrypt at the service's cost.
func (s *Console) hashPassword(password string) ([]byte, error) {
	return bcrypt.GenerateFromPassword([]byte(password), s.passwordCost)
}

// The gateway's own pages (the widget frame, the hosted link form) are
// given a store's app token without its secret, as any browser is. What
// they may do with it is decided here: they act as a browser from the
// origin they serve, and where a page needs more than a browser may have,
// it gets a method that answers exactly that and nothing else.

// BrowserCaller is the caller a page acts as for a store app token it was
// given (the appId of the widget frame or the link form): the token's
// browser use, from origin. It checks the token as Authenticate checks a
// browser's (signature, not revoked, a store token: INVALID_APP_TOKEN) and
// the origin likewise (one of the token's domains or the gateway itself:
// INVALID_DOMAIN). A JWT with a secret in front is not a browser's
// credential and is refused.
func (s *Service) BrowserCaller(ctx context.Context, jwt, origin string) (*payment.Caller, error) {
	tok, err := s.browserAppToken(ctx, jwt)
	if err != nil {
		return nil, err
	}
	if !s.originAllowed(tok, origin) {
		return nil, payment.Errorf(payment.CodeInvalidDomain, "the origin is not one of the app token's domains")
	}
	return payment.NewCaller(tok, false, origin), nil
}
