// Package hosted serves the gateway's own pages, on the gateway's origin
// beside its JSON API: the widget frame that merchants' pages embed
// (/widget/), the hosted link form (/forms/), the pages the sandbox
// acquirer shows shoppers (/sandbox/: a 3-D Secure challenge, a wallet's
// payment screen and its QR code), the merchant console (/console/:
// console*.go, the merchant's own door to the same service), and the
// static files they and merchants' pages load (/static/, and the loader at
// UnivaPay's address, /client/checkout.js).
//
// Every text comes from the message catalogue (web/message) in the language
// message.Negotiate picks, and the scripts get theirs from the pages and
// files served here: the frame embeds its scripts' table, and the loader is
// served with its table written in.
package hosted

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"sync"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/static"
	"github.com/kessai/kessai/web/asset"
	"github.com/kessai/kessai/web/message"
)

// Config is what the gateway's pages need.
type Config struct {
	Service *payment.Service
	// PublicURL is the gateway's external base URL (scheme://host[:port]).
	PublicURL string
	Logger    *slog.Logger
	// SessionKey authenticates the hosted pages' session cookies (at
	// least 32 bytes).
	SessionKey []byte
	// ClientIP is a request's client address, as the API's rate limits
	// see it (the trusted proxies' rule); nil takes the TCP peer.
	ClientIP func(*http.Request) string
	// Mailbox is the local mailbox the console shows when mail has no
	// SMTP server to go to; nil when it has.
	Mailbox Mailbox
}

// pages serves everything on the gateway's origin that is not the JSON
// API: static files, the widget frame, the hosted link form, the
// sandbox's approval pages.
type pages struct {
	cfg Config
	log *slog.Logger
	// console is the merchant console, for tests to walk its routes.
	console *console
}

// Paths are the path prefixes New serves; the gateway's main routes them
// here and everything else to the API. "/client/" mirrors UnivaPay's
// widget host layout (/client/checkout.js), so a shop switching over only
// changes the host.
var Paths = []string{"/static/", "/client/", "/widget/", "/forms/", "/forms", sandboxRoot, "/console", consoleRoot}

// New returns the handler of the gateway's pages.
func New(cfg Config) (http.Handler, error) {
	p := &pages{cfg: cfg, log: cfg.Logger}
	if p.log == nil {
		p.log = slog.Default()
	}
	key, err := sessionKey(cfg.SessionKey, p.log)
	if err != nil {
		return nil, err
	}
	p.cfg.SessionKey = key
	mux := http.NewServeMux()
	if err := p.staticRoutes(mux); err != nil {
		return nil, err
	}
	if err := p.widgetRoutes(mux); err != nil {
		return nil, err
	}
	if err := p.formRoutes(mux); err != nil {
		return nil, err
	}
	if err := p.sandboxRoutes(mux); err != nil {
		return nil, err
	}
	if err := p.consoleRoutes(mux); err != nil {
		return nil, err
	}
	return mux, nil
}

// sessionKey is the configured key of the pages' cookies, or, without
// one, a random key: cookies then last as long as the process.
func sessionKey(key []byte, log *slog.Logger) ([]byte, error) {
	if len(key) >= 32 {
		return key, nil
	}
	if len(key) > 0 {
		return nil, errors.New("hosted: the session key must be at least 32 bytes")
	}
	key = make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	log.Warn("hosted pages: no session key configured; using a random one")
	return key, nil
}

// assets are the files of static.FS, read once per process, with the
// loader's texts written in from the catalogue.
var assets = sync.OnceValues(func() (*asset.Table, error) {
	return asset.Load(static.FS, asset.Options{Rewrite: writeLoaderTexts})
})

// CompressLargeAssets compresses the static files too large to compress
// before the gateway starts serving and that the build did not compress: the
// widget's WebAssembly when it was built without make (make's wasm target
// writes its variants beside it, and then this has nothing to do), which
// brotli's best quality takes seconds and tens of megabytes over. Until it
// has, they go out uncompressed. It returns when it is done or soon after
// ctx ends; a later call takes up what is left. The gateway runs it beside
// its servers.
func CompressLargeAssets(ctx context.Context) error {
	t, err := assets()
	if err != nil {
		return err
	}
	return t.CompressLarge(ctx)
}

// loaderTextsMark is where checkout.js has its texts written in: the
// object literal after it, "{}" in the file, becomes the Loader table.
const loaderTextsMark = "/*kessai:loader-texts*/{}"

// loaderTextKeys are the Loader texts in the order the loader indexes
// them; the catalogue must have exactly these.
var loaderTextKeys = []string{"button", "dialog", "frame", "loadFailed"}

// writeLoaderTexts is the static files' rewrite: the loader gets its texts
// from the catalogue, so that it keeps no copy of its own; it and its HTML
// mode (checkout-html.js), which every merchant's page downloads, go out
// compacted.
func writeLoaderTexts(name string, body []byte) ([]byte, error) {
	switch name {
	case "checkout-html.js":
		return compactScript(body), nil
	case "checkout.js":
	default:
		return body, nil
	}
	if bytes.Count(body, []byte(loaderTextsMark)) != 1 {
		return nil, errors.New("hosted: static/checkout.js must have one " + loaderTextsMark + " for its texts")
	}
	texts, err := loaderTexts()
	if err != nil {
		return nil, err
	}
	return compactScript(bytes.Replace(body, []byte(loaderTextsMark), texts, 1)), nil
}

// compactScript drops a script's comment lines (whose first characters
// after the indentation are //) and every line's indentation and trailing
// blanks: about a fifth of the loader's gzipped bytes. It keeps every line
// break, on which JavaScript's automatic semicolons depend, and so changes
// nothing the script does, provided no string spans lines: the loader has
// no template literal and no line continued with a backslash (a test
// checks).
func compactScript(src []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(src))
	for line := range bytes.Lines(src) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || bytes.HasPrefix(line, []byte("//")) {
			continue
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	return out.Bytes()
}

// loaderTexts is the Loader table as the loader reads it: for each
// language, a JSON array of the texts in loaderTextKeys' order (an array
// because every byte of the loader is downloaded by every page that
// embeds it).
func loaderTexts() ([]byte, error) {
	if keys := message.Loader.Keys(); len(keys) != len(loaderTextKeys) {
		return nil, fmt.Errorf("hosted: the catalogue's Loader has %v, the loader reads %v", keys, loaderTextKeys)
	}
	all := map[message.Locale][]string{}
	for _, l := range message.Locales() {
		for _, k := range loaderTextKeys {
			t, ok := message.Loader.Text(k)
			if !ok {
				return nil, fmt.Errorf("hosted: the catalogue's Loader has no %q", k)
			}
			all[l] = append(all[l], t.In(l))
		}
	}
	return json.Marshal(all)
}

// staticURL returns the versioned path of a file of static.FS,
// "/static/widget.css?v=1a2b3c4d", for pages to link.
func staticURL(name string) string {
	t, err := assets()
	if err != nil {
		return "/static/" + name
	}
	return t.URL(name)
}

// templateFuncs are the functions every page template may use:
// {{static "widget.css"}} is staticURL.
func templateFuncs() template.FuncMap {
	return template.FuncMap{"static": staticURL}
}

// staticRoutes serves the embedded static files under /static/, and the
// loader under UnivaPay's path, /client/checkout.js.
func (p *pages) staticRoutes(mux *http.ServeMux) error {
	t, err := assets()
	if err != nil {
		return err
	}
	mux.HandleFunc("GET /client/checkout.js", func(w http.ResponseWriter, r *http.Request) {
		t.Serve(w, r, "checkout.js")
	})
	mux.HandleFunc("GET /static/{file...}", func(w http.ResponseWriter, r *http.Request) {
		t.Serve(w, r, r.PathValue("file"))
	})
	return nil
}

// amountText writes an amount for people in its currency's format.
func amountText(amount int64, currency string) string {
	c, ok := payment.LookupCurrency(currency)
	if !ok {
		c = payment.Currency{Code: currency}
	}
	return message.Amount(amount, c.Code, c.MinorUnits)
}
