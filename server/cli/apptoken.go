package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"strings"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/payment"
)

// domainFlags collects repeated --domain flags.
type domainFlags []string

func (d *domainFlags) String() string     { return strings.Join(*d, ",") }
func (d *domainFlags) Set(v string) error { *d = append(*d, v); return nil }

// CreateAppToken is `kessai apptoken create`: an operator's way to mint a
// store token without the API. It prints the same fields as
// demo-credentials.json, to out.
func CreateAppToken(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := gateway.LoadConfig(nil)
	if err != nil {
		return err
	}
	fs := flag.NewFlagSet("apptoken create", flag.ContinueOnError)
	store := fs.String("store", "", "store id")
	mode := fs.String("mode", "test", "test or live")
	var domains domainFlags
	fs.Var(&domains, "domain", "a browser domain the token may be used from (repeatable)")
	fs.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "data directory (KESSAI_DATA_DIR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	storeID, err := uuid.Parse(*store)
	if err != nil {
		return errors.New("--store must be a store id")
	}
	service, closeStore, err := gateway.OpenService(ctx, cfg, cfg.Logger(os.Stderr))
	if err != nil {
		return err
	}
	defer closeStore()
	issued, err := service.Access.IssueStoreAppToken(ctx, storeID, payment.NewAppToken{Mode: payment.Mode(*mode), Domains: domains})
	if err != nil {
		return err
	}
	c := gateway.Credentials{
		APIURL:     cfg.PublicURL,
		MerchantID: issued.MerchantID.String(),
		StoreID:    issued.StoreID.String(),
		JWT:        issued.JWT,
		Secret:     issued.Secret,
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}
