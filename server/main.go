// Command kessai is the Kessai payment gateway: the UnivaPay-compatible
// API, the hosted pages and, on a second port, the demo storefront, over an
// embedded SQLite store by default.
//
//	kessai [serve]                                   run the gateway
//	kessai apptoken create --store ID --mode test|live [--domain HOST]...
//	kessai listen --forward-to URL [--gateway URL] [--token SECRET.JWT]
//	kessai trigger EVENT [--gateway URL] [--token SECRET.JWT]
//	kessai migrate --to POSTGRES_URL [--data-dir DIR]
//
// Configuration comes from the environment (KESSAI_ADDR, KESSAI_DEMO_ADDR,
// KESSAI_DATA_DIR, KESSAI_PUBLIC_URL, KESSAI_DATABASE_URL, KESSAI_REDIS_URL,
// KESSAI_LOG_LEVEL, …); see the README for the full list.
//
// This package only dispatches: the gateway's wiring is package gateway,
// the other commands are package cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/kessai/kessai/server/cli"
	"github.com/kessai/kessai/server/gateway"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kessai:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	cmd := "serve"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		cfg, err := gateway.LoadConfig(args)
		if err != nil {
			return err
		}
		return gateway.Run(ctx, cfg)
	case "apptoken":
		if len(args) == 0 || args[0] != "create" {
			return fmt.Errorf("usage: kessai apptoken create --store ID --mode test|live [--domain HOST]...")
		}
		return cli.CreateAppToken(ctx, args[1:], os.Stdout)
	case "listen":
		return cli.Listen(ctx, args, os.Stdout)
	case "trigger":
		return cli.Trigger(ctx, args, os.Stdout)
	case "migrate":
		return cli.Migrate(ctx, args, os.Stdout)
	case "help", "-h", "--help":
		fmt.Println(usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", cmd, usage)
	}
}

const usage = `usage:
  kessai [serve]                 run the gateway (configuration from KESSAI_* variables)
  kessai apptoken create --store ID --mode test|live [--domain HOST]...
                                 create an app token and print it as JSON
  kessai listen --forward-to URL [--gateway URL] [--token SECRET.JWT] [--secret whsec_…]
                                 forward the gateway's events to a local URL, signed
  kessai trigger EVENT [--gateway URL] [--token SECRET.JWT]
                                 make the sandbox produce an event (charge_finished, …)
  kessai migrate --to POSTGRES_URL [--data-dir DIR]
                                 copy the embedded store into an empty PostgreSQL schema`
