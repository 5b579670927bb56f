package jwt_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	gojwt "github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/kessai/kessai/server/jwt"
	"github.com/kessai/kessai/server/payment"
)

var (
	key      = []byte("0123456789abcdef0123456789abcdef")
	otherKey = []byte("fedcba9876543210fedcba9876543210")
)

func codec(t *testing.T, k []byte) *jwt.Codec {
	t.Helper()
	c, err := jwt.NewCodec(k)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func storeClaims() payment.AppTokenClaims {
	return payment.AppTokenClaims{
		ID: payment.NewID(), MerchantID: payment.NewID(), StoreID: payment.NewID(), CreatorID: payment.NewID(),
		Mode: payment.ModeTest, Domains: []string{"shop.example", "*.shop.example"},
		IssuedAt: time.Date(2025, 1, 31, 8, 41, 8, 925809000, time.UTC),
	}
}

func merchantClaims() payment.AppTokenClaims {
	c := storeClaims()
	c.StoreID, c.Mode, c.Domains = uuid.Nil, "", nil
	return c
}

// segments decodes the header and payload of a compact JWT.
func segments(t *testing.T, token string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts, want 3", len(parts))
	}
	decode := func(s string) map[string]any {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("segment %q is not raw base64url: %v", s, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("segment %s: %v", b, err)
		}
		return m
	}
	return decode(parts[0]), decode(parts[1])
}

func encodeSegment(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hs256 signs header.payload with k the way HS256 does.
func hs256(signingInput string, k []byte) string {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(signingInput))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func TestNewCodecShortKey(t *testing.T) {
	if _, err := jwt.NewCodec(key[:31]); err == nil {
		t.Error("NewCodec accepted a 31-byte key")
	}
}

func TestRoundTrip(t *testing.T) {
	c := codec(t, key)
	for _, tc := range []struct {
		name   string
		claims payment.AppTokenClaims
	}{
		{"Store", storeClaims()},
		{"StoreNoDomains", func() payment.AppTokenClaims { c := storeClaims(); c.Domains = []string{}; return c }()},
		{"StoreLive", func() payment.AppTokenClaims { c := storeClaims(); c.Mode = payment.ModeLive; return c }()},
		{"Merchant", merchantClaims()},
		{"NoCreator", func() payment.AppTokenClaims { c := storeClaims(); c.CreatorID = uuid.Nil; return c }()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			token, err := c.Sign(tc.claims)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Parse(token)
			if err != nil {
				t.Fatalf("Parse of a token it signed: %v", err)
			}
			want := tc.claims
			// iat has a one-second resolution.
			want.IssuedAt = want.IssuedAt.Truncate(time.Second)
			if !got.IssuedAt.Equal(want.IssuedAt) {
				t.Errorf("IssuedAt = %v, want %v", got.IssuedAt, want.IssuedAt)
			}
			got.IssuedAt, want.IssuedAt = time.Time{}, time.Time{}
			if len(got.Domains) == 0 && len(want.Domains) == 0 {
				got.Domains, want.Domains = nil, nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Parse(Sign(c)) =\n  %+v\nwant\n  %+v", got, want)
			}
		})
	}
}

func TestClaimsOnTheWire(t *testing.T) {
	c := codec(t, key)
	t.Run("Store", func(t *testing.T) {
		cl := storeClaims()
		token, err := c.Sign(cl)
		if err != nil {
			t.Fatal(err)
		}
		header, payload := segments(t, token)
		if header["alg"] != "HS256" || header["typ"] != "JWT" {
			t.Errorf("header = %v, want alg HS256, typ JWT", header)
		}
		want := map[string]any{
			"sub": "app_token", "iat": float64(cl.IssuedAt.Unix()), "merchant_id": cl.MerchantID.String(),
			"store_id": cl.StoreID.String(), "domains": []any{"shop.example", "*.shop.example"}, "mode": "test",
			"creator_id": cl.CreatorID.String(), "version": float64(1), "jti": cl.ID.String(),
		}
		if !reflect.DeepEqual(payload, want) {
			t.Errorf("payload =\n  %v\nwant\n  %v", payload, want)
		}
		if _, ok := payload["exp"]; ok {
			t.Error("app tokens must not expire")
		}
	})
	t.Run("StoreWithoutDomains", func(t *testing.T) {
		cl := storeClaims()
		cl.Domains = nil
		token, err := c.Sign(cl)
		if err != nil {
			t.Fatal(err)
		}
		_, payload := segments(t, token)
		if d, ok := payload["domains"]; !ok || !reflect.DeepEqual(d, []any{}) {
			t.Errorf("domains = %v (present %v), want []", d, ok)
		}
	})
	t.Run("Merchant", func(t *testing.T) {
		cl := merchantClaims()
		cl.Mode, cl.Domains = payment.ModeLive, []string{"ignored.example"} // a merchant token has neither
		token, err := c.Sign(cl)
		if err != nil {
			t.Fatal(err)
		}
		_, payload := segments(t, token)
		for _, k := range []string{"store_id", "domains", "mode"} {
			if v, ok := payload[k]; ok {
				t.Errorf("merchant token has claim %s = %v", k, v)
			}
		}
		for _, k := range []string{"sub", "iat", "merchant_id", "creator_id", "version", "jti"} {
			if _, ok := payload[k]; !ok {
				t.Errorf("merchant token lacks claim %s", k)
			}
		}
		got, err := c.Parse(token)
		if err != nil {
			t.Fatal(err)
		}
		if got.StoreID != uuid.Nil || got.Mode != "" || len(got.Domains) != 0 {
			t.Errorf("merchant token parsed as %+v", got)
		}
	})
}

func TestParseRejects(t *testing.T) {
	c := codec(t, key)
	cl := storeClaims()
	good, err := c.Sign(cl)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(good, ".")
	_, payload := segments(t, good)

	// withPayload returns a token with the given payload, signed HS256 with k.
	withPayload := func(p map[string]any, k []byte) string {
		input := parts[0] + "." + encodeSegment(t, p)
		return input + "." + hs256(input, k)
	}
	// modified copies the good payload with one claim changed (nil deletes).
	modified := func(claim string, v any) map[string]any {
		p := map[string]any{}
		for k, val := range payload {
			p[k] = val
		}
		if v == nil {
			delete(p, claim)
		} else {
			p[claim] = v
		}
		return p
	}
	// withHeader signs the good payload under another header.
	withHeader := func(h map[string]any, sign func(input string) string) string {
		input := encodeSegment(t, h) + "." + parts[1]
		return input + "." + sign(input)
	}

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rs256, err := gojwt.NewWithClaims(gojwt.SigningMethodRS256, gojwt.MapClaims(payload)).SignedString(rsaKey)
	if err != nil {
		t.Fatal(err)
	}
	hs512, err := gojwt.NewWithClaims(gojwt.SigningMethodHS512, gojwt.MapClaims(payload)).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	otherKeyToken, err := codec(t, otherKey).Sign(cl)
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name  string
		token string
	}{
		{"Empty", ""},
		{"Garbage", "garbage"},
		{"TwoParts", parts[0] + "." + parts[1]},
		{"FourParts", "secret." + good},
		{"AlgNone", withHeader(map[string]any{"alg": "none", "typ": "JWT"}, func(string) string { return "" })},
		{"AlgNoneUppercase", withHeader(map[string]any{"alg": "NONE", "typ": "JWT"}, func(string) string { return "" })},
		{"AlgNoneWithSignature", withHeader(map[string]any{"alg": "none", "typ": "JWT"}, func(in string) string { return hs256(in, key) })},
		{"RS256", rs256},
		// The classic confusion: RS256 named, HMAC with the server's key.
		{"RS256WithHMAC", withHeader(map[string]any{"alg": "RS256", "typ": "JWT"}, func(in string) string { return hs256(in, key) })},
		{"HS512SameKey", hs512},
		{"OtherKey", otherKeyToken},
		{"TamperedPayload", parts[0] + "." + encodeSegment(t, modified("merchant_id", payment.NewID().String())) + "." + parts[2]},
		{"TamperedSignature", parts[0] + "." + parts[1] + "." + hs256(parts[0]+"."+parts[1], otherKey)},
		{"NoSignature", parts[0] + "." + parts[1] + "."},
		{"SubLoginToken", withPayload(modified("sub", "login_token"), key)},
		{"SubMissing", withPayload(modified("sub", nil), key)},
		{"JTINotUUID", withPayload(modified("jti", "not-a-uuid"), key)},
		{"JTIMissing", withPayload(modified("jti", nil), key)},
		{"MerchantNotUUID", withPayload(modified("merchant_id", "m-1"), key)},
		{"MerchantMissing", withPayload(modified("merchant_id", nil), key)},
		{"StoreNotUUID", withPayload(modified("store_id", "s-1"), key)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := c.Parse(tc.token); err == nil {
				t.Errorf("Parse accepted %q as %+v", tc.token, got)
			}
		})
	}

	t.Run("ControlsAreValid", func(t *testing.T) {
		// The forged tokens above differ from accepted ones only in what
		// each case names.
		if _, err := c.Parse(withPayload(modified("version", 1), key)); err != nil {
			t.Errorf("a re-signed unchanged payload was refused: %v", err)
		}
		if _, err := c.Parse(withHeader(map[string]any{"alg": "HS256", "typ": "JWT"}, func(in string) string { return hs256(in, key) })); err != nil {
			t.Errorf("a re-built HS256 header was refused: %v", err)
		}
	})
}

func TestParseOldToken(t *testing.T) {
	// App tokens do not expire; revocation ends them.
	c := codec(t, key)
	old := storeClaims()
	old.IssuedAt = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	token, err := c.Sign(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Parse(token); err != nil {
		t.Errorf("an old token was refused: %v", err)
	}
}
