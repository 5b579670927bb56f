// Package sandboxpages serves the pages the sandbox acquirer
// (server/sandbox) shows shoppers on the gateway's origin, where a real
// acquirer would send them to its own or an issuer's or a wallet's: the
// 3-D Secure challenge and the online and QR wallets' payment screens
// (approval.go), and the instructions of a konbini payment or a bank
// transfer, with the sandbox's stand-ins for the store's counter and the
// bank (slip.go).
//
// The pages may be framed by the widget frame on a merchant's page, so
// they answer with the store's domains as frame-ancestors, and they act
// only through what holding the approval's key allows.
package sandboxpages

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/web/site"
)

// Service is what the sandbox's pages ask of the payment service: an
// approval by its key, the shopper's answer to it, and money arriving on
// a bank transfer's account.
type Service interface {
	Clock() payment.Clock
	Approval(ctx context.Context, key string) (*payment.ApprovalPage, error)
	ActOnApproval(ctx context.Context, key string, action payment.ApprovalAction, code string) (*payment.ApprovalPage, error)
	DepositOnApproval(ctx context.Context, key string, amount int64) (*payment.ApprovalPage, error)
}

// Config is what the sandbox's pages need.
type Config struct {
	Service Service
	// PublicURL is the gateway's external base URL (scheme://host[:port]):
	// the QR code of a wallet page holds the page's absolute address.
	PublicURL string
	Logger    *slog.Logger
	// SessionKey authenticates the pages' CSRF tokens (at least 32 bytes);
	// without one, a random key lasts as long as the process.
	SessionKey []byte
}

// Paths are the path prefixes New serves; the gateway routes them here.
var Paths = []string{sandboxRoot}

// New returns the handler of the sandbox's pages.
func New(cfg Config) (http.Handler, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	key, err := site.SessionKey(cfg.SessionKey, log)
	if err != nil {
		return nil, err
	}
	sp, err := newSandboxPages(cfg, log, key)
	if err != nil {
		return nil, err
	}
	r := site.NewRouter()
	sp.routes(r)
	// Anything else under /sandbox/ is the pages' own "no such page", in
	// any method.
	r.PathPrefix(sandboxRoot).HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sp.fail(w, sp.locale(r, ""), http.StatusNotFound, "not_found")
	})
	return r, nil
}
