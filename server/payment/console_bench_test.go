package payment_test

import (
	"context"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/kessai/kessai/server/kessaitest/servicetest"
	"github.com/kessai/kessai/server/payment"
)

// BenchmarkSignIn is a whole sign-in (throttle off, the user's read, the
// bcrypt comparison, the session's transaction) beside its floor, the
// bcrypt comparison alone: the rest should be noise next to it.
func BenchmarkSignIn(b *testing.B) {
	st := servicetest.New(b, servicetest.Options{})
	demo := st.SeedDemo(b)
	ctx := context.Background()
	b.Run("bcrypt-only", func(b *testing.B) {
		// The floor hashes at the stack's cost, as the demo user's was.
		hash, err := bcrypt.GenerateFromPassword([]byte(demo.ConsolePassword), st.Config.PasswordCost)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if err := bcrypt.CompareHashAndPassword(hash, []byte(demo.ConsolePassword)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sign-in", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := st.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: demo.ConsolePassword}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkConsoleSession is what every console page pays to know its
// session (one indexed read; a write at most once a minute).
func BenchmarkConsoleSession(b *testing.B) {
	st := servicetest.New(b, servicetest.Options{})
	demo := st.SeedDemo(b)
	ctx := context.Background()
	token, _, err := st.Service.Console.SignIn(ctx, payment.SignInRequest{Email: payment.DemoEmail, Password: demo.ConsolePassword})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Service.Console.ConsoleSession(ctx, token); err != nil {
			b.Fatal(err)
		}
	}
}
