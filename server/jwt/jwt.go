// Package jwt signs and verifies Kessai's app-token JWTs (HS256, with the
// claims of UnivaPay's app tokens) with github.com/golang-jwt/jwt. It is the only package
// that knows the JWT library.
package jwt

import (
	"errors"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// Codec implements payment.TokenCodec with one HMAC key.
type Codec struct {
	key    []byte
	parser *gojwt.Parser
}

// NewCodec returns a codec signing with key, which must hold at least 32
// bytes.
func NewCodec(key []byte) (*Codec, error) {
	if len(key) < 32 {
		return nil, errors.New("jwt: signing key must be at least 32 bytes")
	}
	return &Codec{
		key: key,
		// Only HS256: a token that names another algorithm ("none", RS256
		// with our key as a public key) is refused before any check.
		parser: gojwt.NewParser(gojwt.WithValidMethods([]string{"HS256"}), gojwt.WithoutClaimsValidation(),
			// One token, one spelling: base64url with the unused bits of the
			// last character set is refused, not read as the same signature.
			gojwt.WithStrictDecoding()),
	}, nil
}

type claims struct {
	Subject    string   `json:"sub"`
	IssuedAt   int64    `json:"iat"`
	MerchantID string   `json:"merchant_id"`
	StoreID    string   `json:"store_id,omitempty"`
	Domains    []string `json:"domains,omitzero"`
	Mode       string   `json:"mode,omitempty"`
	CreatorID  string   `json:"creator_id"`
	Version    int      `json:"version"`
	ID         string   `json:"jti"`
}

// The gojwt.Claims methods. App tokens do not expire (UnivaPay's carry no
// exp); revocation ends them.
func (c *claims) GetExpirationTime() (*gojwt.NumericDate, error) { return nil, nil }
func (c *claims) GetIssuedAt() (*gojwt.NumericDate, error) {
	return gojwt.NewNumericDate(time.Unix(c.IssuedAt, 0)), nil
}
func (c *claims) GetNotBefore() (*gojwt.NumericDate, error) { return nil, nil }
func (c *claims) GetIssuer() (string, error)                { return "", nil }
func (c *claims) GetSubject() (string, error)               { return c.Subject, nil }
func (c *claims) GetAudience() (gojwt.ClaimStrings, error)  { return nil, nil }

// subject is the sub claim of app tokens; PHP's SDK rejects anything else.
const subject = "app_token"

// Sign returns the signed JWT for c.
func (k *Codec) Sign(c payment.AppTokenClaims) (string, error) {
	cl := &claims{
		Subject:    subject,
		IssuedAt:   c.IssuedAt.Unix(),
		MerchantID: c.MerchantID.String(),
		CreatorID:  c.CreatorID.String(),
		Version:    1,
		ID:         c.ID.String(),
	}
	if c.StoreID != uuid.Nil {
		cl.StoreID = c.StoreID.String()
		cl.Domains = c.Domains
		if cl.Domains == nil {
			cl.Domains = []string{}
		}
		cl.Mode = string(c.Mode)
	}
	return gojwt.NewWithClaims(gojwt.SigningMethodHS256, cl).SignedString(k.key)
}

var errClaims = errors.New("jwt: not an app token")

// Parse verifies the signature of token and returns its claims.
func (k *Codec) Parse(token string) (payment.AppTokenClaims, error) {
	var cl claims
	_, err := k.parser.ParseWithClaims(token, &cl, func(*gojwt.Token) (any, error) { return k.key, nil })
	if err != nil {
		return payment.AppTokenClaims{}, err
	}
	if cl.Subject != subject {
		return payment.AppTokenClaims{}, errClaims
	}
	out := payment.AppTokenClaims{
		Mode:     payment.Mode(cl.Mode),
		Domains:  cl.Domains,
		IssuedAt: time.Unix(cl.IssuedAt, 0).UTC(),
	}
	if out.ID, err = uuid.Parse(cl.ID); err != nil {
		return payment.AppTokenClaims{}, errClaims
	}
	if out.MerchantID, err = uuid.Parse(cl.MerchantID); err != nil {
		return payment.AppTokenClaims{}, errClaims
	}
	if cl.StoreID != "" {
		if out.StoreID, err = uuid.Parse(cl.StoreID); err != nil {
			return payment.AppTokenClaims{}, errClaims
		}
	}
	if cl.CreatorID != "" {
		out.CreatorID, _ = uuid.Parse(cl.CreatorID)
	}
	return out, nil
}
