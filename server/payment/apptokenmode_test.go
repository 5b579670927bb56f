package payment_test

import (
	"context"
	"testing"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// TestTestCallerCannotRevokeLiveTokens: a test-mode caller does not find
// a live-mode token to revoke (as it may not create one); a live-mode
// caller does, and may revoke test tokens too.
func TestTestCallerCannotRevokeLiveTokens(t *testing.T) {
	st := servicetest.New(t, servicetest.Options{})
	demo := st.SeedDemo(t)
	svc, ctx := st.Service, context.Background()
	live, err := svc.Access.IssueStoreAppToken(ctx, demo.StoreID, payment.NewAppToken{Mode: payment.ModeLive})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Access.RevokeAppToken(ctx, demo.Caller, demo.StoreID, live.ID); !payment.IsNotFound(err) {
		t.Fatalf("a test-mode caller revoking a live token: %v, want NOT_FOUND", err)
	}
	liveCaller, err := svc.Access.Authenticate(ctx, "Bearer "+live.Secret+"."+live.JWT, "")
	if err != nil {
		t.Fatalf("the live token was revoked by a test-mode caller: %v", err)
	}
	test, err := svc.Access.IssueStoreAppToken(ctx, demo.StoreID, payment.NewAppToken{})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Access.RevokeAppToken(ctx, liveCaller, demo.StoreID, test.ID); err != nil {
		t.Errorf("a live-mode caller revoking a test token: %v", err)
	}
	if err := svc.Access.RevokeAppToken(ctx, liveCaller, demo.StoreID, live.ID); err != nil {
		t.Errorf("a live-mode token revoking itself: %v", err)
	}
}
