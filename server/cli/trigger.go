package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// triggerCard is the sandbox's card that always succeeds.
const triggerCard = "4000020000000000"

// triggerWait bounds how long trigger waits for the sandbox to finish a
// payment it started.
const triggerWait = 30 * time.Second

// triggers are the events `kessai trigger` can make the sandbox produce,
// each by the public API calls that produce it in earnest.
var triggers = map[string]func(ctx context.Context, t *triggerRun) error{
	"token_created": func(ctx context.Context, t *triggerRun) error {
		_, err := t.token(ctx, "one_time")
		return err
	},
	"token_updated": func(ctx context.Context, t *triggerRun) error {
		tok, err := t.token(ctx, "recurring")
		if err != nil {
			return err
		}
		_, err = t.api.call(ctx, http.MethodPatch, t.storePath("/tokens/"+tok), map[string]any{"email": "updated@kessai.test"}, http.StatusOK)
		return err
	},
	"recurring_token_deleted": func(ctx context.Context, t *triggerRun) error {
		tok, err := t.token(ctx, "recurring")
		if err != nil {
			return err
		}
		_, err = t.api.call(ctx, http.MethodDelete, t.storePath("/tokens/"+tok), nil, http.StatusNoContent)
		return err
	},
	"charge_finished": func(ctx context.Context, t *triggerRun) error {
		_, err := t.charge(ctx, true)
		return err
	},
	"charge_updated": func(ctx context.Context, t *triggerRun) error {
		_, err := t.charge(ctx, false)
		return err
	},
	"refund_finished": func(ctx context.Context, t *triggerRun) error {
		ch, err := t.charge(ctx, true)
		if err != nil {
			return err
		}
		return t.operation(ctx, ch, "refund", map[string]any{"amount": 1000, "currency": "JPY", "reason": "customer_request"})
	},
	"cancel_finished": func(ctx context.Context, t *triggerRun) error {
		ch, err := t.charge(ctx, false)
		if err != nil {
			return err
		}
		return t.operation(ctx, ch, "cancel", map[string]any{})
	},
	"bank_transfer_status_updated": func(ctx context.Context, t *triggerRun) error {
		ch, err := t.bankTransfer(ctx)
		if err != nil {
			return err
		}
		return t.deposit(ctx, ch, 1000)
	},
}

func triggerNames() []string {
	names := make([]string, 0, len(triggers))
	for n := range triggers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// triggerRun is one `kessai trigger`.
type triggerRun struct {
	api   *apiClient
	out   io.Writer
	store string
}

// Trigger is `kessai trigger EVENT`: it makes the sandbox produce the
// event through the public API (test cards and the sandbox's test
// helpers only) and prints the ids of what it made.
func Trigger(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("trigger", flag.ContinueOnError)
	var a apiFlags
	a.register(fs)
	// The event comes first (`kessai trigger charge_finished --token …`);
	// flags before it are read too.
	var event string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		event, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if event == "" && fs.NArg() > 0 {
		event = fs.Arg(0)
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("trigger takes one event, got also %q", fs.Args())
	}
	run, ok := triggers[event]
	if !ok {
		return fmt.Errorf("usage: kessai trigger EVENT [--gateway URL] [--token SECRET.JWT]\nevents: %s", strings.Join(triggerNames(), ", "))
	}
	client, err := a.client()
	if err != nil {
		return err
	}
	defer client.close()
	t := &triggerRun{api: client, out: out}
	if err := run(ctx, t); err != nil {
		return fmt.Errorf("trigger %s: %w", event, err)
	}
	fmt.Fprintf(out, "Triggered %s\n", event)
	return nil
}

func (t *triggerRun) storePath(p string) string { return "/stores/" + t.store + p }

// token makes a card token of the sandbox's succeeding card.
func (t *triggerRun) token(ctx context.Context, kind string) (string, error) {
	return t.newToken(ctx, kind, map[string]any{
		"payment_type": "card", "type": kind, "email": "trigger@kessai.test",
		"data": map[string]any{
			"cardholder": "KESSAI TRIGGER", "card_number": triggerCard,
			"exp_month": 12, "exp_year": time.Now().Year() + 3, "cvv": "123",
		},
	})
}

// newToken makes the token body asks for and prints its id, said to be
// of kind.
func (t *triggerRun) newToken(ctx context.Context, kind string, body map[string]any) (string, error) {
	tok, err := t.api.call(ctx, http.MethodPost, "/tokens", body, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := tok["id"].(string)
	t.store, _ = tok["store_id"].(string)
	if id == "" || t.store == "" {
		return "", errors.New("the token's answer has no id or store_id")
	}
	fmt.Fprintf(t.out, "token   %s (%s)\n", id, kind)
	return id, nil
}

// bankTransfer makes a bank-transfer token at the sandbox's test bank and
// a charge of 1,000 yen on it, and waits for the charge to await its
// shopper's deposits.
func (t *triggerRun) bankTransfer(ctx context.Context) (string, error) {
	tok, err := t.newToken(ctx, "bank_transfer", map[string]any{
		"payment_type": "bank_transfer", "type": "one_time", "email": "trigger@kessai.test",
		"data": map[string]any{"brand": "bank_test_brand"},
	})
	if err != nil {
		return "", err
	}
	ch, err := t.api.call(ctx, http.MethodPost, "/charges", map[string]any{
		"transaction_token_id": tok, "amount": 1000, "currency": "JPY",
	}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := ch["id"].(string)
	if id == "" {
		return "", errors.New("the charge's answer has no id")
	}
	status, err := t.await(ctx, t.storePath("/charges/"+id), "pending")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(t.out, "charge  %s (%s)\n", id, status)
	if status != "awaiting" {
		return "", fmt.Errorf("the charge is %s, not awaiting its deposit", status)
	}
	return id, nil
}

// deposit wires amount yen to a bank transfer's account, through the
// sandbox's test helper (a test-mode token only), which answers the
// charge as the deposit left it.
func (t *triggerRun) deposit(ctx context.Context, chargeID string, amount int) error {
	ch, err := t.api.call(ctx, http.MethodPost, t.storePath("/charges/"+chargeID+"/test_helpers/deposit"),
		map[string]any{"amount": amount}, http.StatusOK)
	if err != nil {
		return err
	}
	status, _ := ch["status"].(string)
	fmt.Fprintf(t.out, "deposit %d JPY (the charge %s)\n", amount, status)
	return nil
}

// charge charges a new token 1,000 yen, captured or only authorised, and
// waits for the sandbox to settle it.
func (t *triggerRun) charge(ctx context.Context, capture bool) (string, error) {
	tok, err := t.token(ctx, "one_time")
	if err != nil {
		return "", err
	}
	ch, err := t.api.call(ctx, http.MethodPost, "/charges", map[string]any{
		"transaction_token_id": tok, "amount": 1000, "currency": "JPY", "capture": capture,
	}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	id, _ := ch["id"].(string)
	if id == "" {
		return "", errors.New("the charge's answer has no id")
	}
	want := "successful"
	if !capture {
		want = "authorized"
	}
	status, err := t.await(ctx, t.storePath("/charges/"+id), "pending")
	if err != nil {
		return "", err
	}
	fmt.Fprintf(t.out, "charge  %s (%s)\n", id, status)
	if status != want {
		return "", fmt.Errorf("the charge ended %s, not %s", status, want)
	}
	return id, nil
}

// operation refunds or cancels a charge and waits for it to finish.
func (t *triggerRun) operation(ctx context.Context, chargeID, kind string, body map[string]any) error {
	path := t.storePath("/charges/" + chargeID + "/" + kind + "s")
	op, err := t.api.call(ctx, http.MethodPost, path, body, http.StatusCreated)
	if err != nil {
		return err
	}
	id, _ := op["id"].(string)
	if id == "" {
		return fmt.Errorf("the %s's answer has no id", kind)
	}
	status, err := t.await(ctx, path+"/"+id, "pending")
	if err != nil {
		return err
	}
	fmt.Fprintf(t.out, "%-7s %s (%s)\n", kind, id, status)
	if status != "successful" {
		return fmt.Errorf("the %s ended %s", kind, status)
	}
	return nil
}

// await long-polls a resource until its status leaves from.
func (t *triggerRun) await(ctx context.Context, path, from string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, triggerWait)
	defer cancel()
	for {
		v, err := t.api.call(ctx, http.MethodGet, path+"?polling=true", nil, http.StatusOK)
		if err != nil {
			return "", err
		}
		if st, _ := v["status"].(string); st != from {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("still %s after %s", from, triggerWait)
		case <-time.After(200 * time.Millisecond):
		}
	}
}
