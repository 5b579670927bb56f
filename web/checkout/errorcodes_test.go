package checkout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/static"
	"github.com/kessai/kessai/web/message"
)

// serverCodes are the error codes the API answers with: the constants of
// type Code in server/payment/error.go, read from the source so that a code
// added there is known here at once.
func serverCodes(t *testing.T) map[string]bool {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "..", "server", "payment", "error.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	for _, decl := range file.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Code" {
				continue
			}
			for _, v := range vs.Values {
				if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					codes[s] = true
				}
			}
		}
	}
	if !codes[string(payment.CodeValidation)] || !codes[string(payment.CodeTooManyRequests)] || len(codes) < 20 {
		t.Fatalf("read %d codes from error.go: %v", len(codes), codes)
	}
	return codes
}

// serverReasons are the field reasons the server can send: every
// UPPER_SNAKE string literal of the domain and of the card rules.
func serverReasons(t *testing.T) map[string]bool {
	t.Helper()
	reasons := map[string]bool{}
	for _, dir := range []string{filepath.Join("..", "..", "server", "payment"), filepath.Join("..", "..", "wasm", "card")} {
		// The domain is a tree of packages: every one of them may send one.
		var files []string
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && upperSnake.MatchString(s) {
						reasons[s] = true
					}
				}
				return true
			})
		}
	}
	return reasons
}

var (
	upperSnake = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$|^[A-Z]{4,}$`)
	// What a script matches an error code on: a case label or a comparison.
	jsCaseString = regexp.MustCompile(`case\s+"([A-Z][A-Z0-9_]+)"\s*:`)
	jsCompare    = regexp.MustCompile(`[!=]==\s*"([A-Z][A-Z0-9_]+)"|"([A-Z][A-Z0-9_]+)"\s*[!=]==`)
	jsCaseNumber = regexp.MustCompile(`case\s+(\d{3})\s*:`)
	// The tables of widget.js: API_ERRORS (code → [message key, fatal])
	// and REASON_KEY (field reason → message suffix).
	jsAPIErrors = regexp.MustCompile(`(?s)var API_ERRORS = \{(.*?)\};`)
	jsAPIEntry  = regexp.MustCompile(`([A-Z][A-Z0-9_]+):\s*\["(\w+)",\s*(true|false)\]`)
	jsReasonKey = regexp.MustCompile(`(?s)var REASON_KEY = \{(.*?)\};`)
	jsTableKey  = regexp.MustCompile(`([A-Z][A-Z0-9_]+)\s*:`)
)

// clientCodes are the codes the loader and the frame make up themselves,
// for what never reaches the server: each must really be produced by a
// script (`code: "X"` or failure("X"…)), not only matched on.
var clientCodes = []string{"FRAME_LOAD_FAILED", "NETWORK_ERROR", "UNKNOWN_ERROR", "BUSY", "CLOSED", "NOT_OPEN"}

// widgetFlowCodes are the API codes the widget's own requests (POST
// /tokens and /charges with a browser token, GET of the charge) can get,
// with the message each must show.
var widgetFlowCodes = []string{
	"VALIDATION_ERROR", "INVALID_APP_TOKEN", "INVALID_DOMAIN", "AUTH_HEADER_MISSING", "INVALID_PERMISSIONS",
	"DIRECT_CARD_TOKEN_CREATION_DISABLED", "NO_TEST_CARD_IN_LIVE_MODE", "TOO_MANY_REQUESTS", "TRANSACTION_TOKEN_EXPIRED",
	"TRANSACTION_ALREADY_PROCESSED", "CHARGE_AMOUNT_TOO_LOW", "CHARGE_AMOUNT_TOO_HIGH", "RESOURCE_LIMIT_REACHED",
	"SERVICE_UNAVAILABLE_TRY_AGAIN", "INTERNAL_SERVER_ERROR", "NO_GATEWAYS_AVAILABLE", "PROCESSING_MODE_MISMATCH",
	"TOKEN_FOR_WRONG_STORE", "IDEMPOTENCY_KEY_CONFLICT", "REQUEST_BODY_TOO_LARGE",
	// A konbini payment or a bank transfer the store turned off after the
	// frame was served, or asked for in another currency than yen.
	"CONVENIENCE_PROCESSING_DISABLED", "PAYMENT_TYPE_NOT_ALLOWED", "CURRENCY_NOT_SUPPORTED",
}

// widgetFlowPaymentCodes are the charge errors (error.code of a failed
// charge) that need their own message rather than "declined": among them
// a wallet payment's ends (refused, canceled, expired).
var widgetFlowPaymentCodes = []int{
	304, 305, 309, payment.ErrTooManyCharges, 315, 356, 358, payment.ErrNoGatewaysAvailable,
	payment.ErrConfirmationExpired, payment.ErrWalletRejected, payment.ErrPaymentCanceled,
}

func readScripts(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	names, err := fs.Glob(static.FS, "*.js")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := fs.ReadFile(static.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = string(b)
	}
	if out["widget.js"] == "" || out["checkout.js"] == "" {
		t.Fatalf("scripts not found: %v", names)
	}
	return out
}

// TestScriptErrorCodesAreReal: every error code the widget's scripts match
// on is one the server sends (or one the scripts make up themselves), and
// every code the widget flow can meet maps to a message that exists in
// English and Japanese.
func TestScriptErrorCodesAreReal(t *testing.T) {
	codes, reasons := serverCodes(t), serverReasons(t)
	scripts := readScripts(t)
	produced := func(code string) bool {
		for _, src := range scripts {
			for _, form := range []string{`code: "` + code + `"`, `failure("` + code + `"`, `rejectAll("` + code + `"`, `|| "` + code + `"`} {
				if strings.Contains(src, form) {
					return true
				}
			}
		}
		return false
	}
	for _, code := range clientCodes {
		if codes[code] {
			t.Errorf("%s is listed as a client code but the server sends it too", code)
		}
		if !produced(code) {
			t.Errorf("the client code %s is not produced by any script", code)
		}
	}
	known := func(code string) bool { return codes[code] || slices.Contains(clientCodes, code) }

	for name, src := range scripts {
		var matched []string
		for _, m := range jsCaseString.FindAllStringSubmatch(src, -1) {
			matched = append(matched, m[1])
		}
		for _, m := range jsCompare.FindAllStringSubmatch(src, -1) {
			matched = append(matched, m[1]+m[2])
		}
		if m := jsAPIErrors.FindStringSubmatch(src); m != nil {
			for _, k := range jsTableKey.FindAllStringSubmatch(m[1], -1) {
				matched = append(matched, k[1])
			}
		}
		for _, code := range matched {
			if !known(code) {
				t.Errorf("%s matches on %q, which the server never sends (see server/payment/error.go)", name, code)
			}
		}
		if m := jsReasonKey.FindStringSubmatch(src); m != nil {
			for _, k := range jsTableKey.FindAllStringSubmatch(m[1], -1) {
				if !reasons[k[1]] {
					t.Errorf("%s maps the field reason %q, which the server never sends", name, k[1])
				}
			}
		}
		for _, m := range jsCaseNumber.FindAllStringSubmatch(src, -1) {
			if n, _ := strconv.Atoi(m[1]); !payment.KnownPaymentErrorCode(n) {
				t.Errorf("%s matches on payment error %d, which is not one (server/payment/processor.go)", name, n)
			}
		}
	}

	// The widget flow: every code it can meet has its message, in both
	// languages, among the messages the frame is given.
	widget := scripts["widget.js"]
	table := map[string]string{}
	if m := jsAPIErrors.FindStringSubmatch(widget); m != nil {
		for _, e := range jsAPIEntry.FindAllStringSubmatch(m[1], -1) {
			table[e[1]] = e[2]
		}
	}
	for _, code := range widgetFlowCodes {
		if !codes[code] {
			t.Errorf("%s is not a server code any more: update widgetFlowCodes", code)
			continue
		}
		key, ok := table[code]
		if !ok {
			t.Errorf("widget.js has no message for %s (its API_ERRORS table)", code)
			continue
		}
		for _, lang := range message.Locales() {
			if message.FrameScript.Get(key, lang) == "" {
				t.Errorf("%s shows message %q, which the frame does not have in %s", code, key, lang)
			}
		}
	}
	for _, n := range widgetFlowPaymentCodes {
		if !regexp.MustCompile(`case\s+` + strconv.Itoa(n) + `\s*:`).MatchString(widget) {
			t.Errorf("widget.js has no message of its own for payment error %d", n)
		}
	}
}
