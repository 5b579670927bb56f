package gateway_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/gateway/gatewaytest"
	"github.com/kessai/kessai/server/payment"
)

// TestGatewayHashesAtDefaultCost: the gateway as main starts it (no test
// option) keeps console passwords at bcrypt's default cost; only tests
// lower it (payment.Config.PasswordCost), to keep the race detector's
// runs short.
func TestGatewayHashesAtDefaultCost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       gatewaytest.Options
		want    int
		wantMsg string
	}{
		{"as main starts it", gatewaytest.Options{DefaultPasswordCost: true}, bcrypt.DefaultCost, "the binary's"},
		{"as the tests start it", gatewaytest.Options{}, bcrypt.MinCost, "the tests'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := gatewaytest.Start(t, tc.o)
			ctx := context.Background()
			var hash []byte
			err := g.DB().View(ctx, func(tx payment.Tx) error {
				u, err := tx.UserByEmail(ctx, payment.DemoEmail)
				if err == nil {
					hash = u.PasswordHash
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			cost, err := bcrypt.Cost(hash)
			if err != nil {
				t.Fatal(err)
			}
			if cost != tc.want {
				t.Errorf("the demo user's password hash has cost %d; want %s, %d", cost, tc.wantMsg, tc.want)
			}
		})
	}
}
