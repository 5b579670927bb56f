package site

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kessai/kessai/web/message"
)

// The loader (static/checkout.js, which web/checkout serves) is written
// into the table of static files as it is read, because its link's
// version is the hash of what is served: every page that links it must
// see the same bytes as the route that serves them.

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
		return nil, errors.New("site: static/checkout.js must have one " + loaderTextsMark + " for its texts")
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
		return nil, fmt.Errorf("site: the catalogue's Loader has %v, the loader reads %v", keys, loaderTextKeys)
	}
	all := map[message.Locale][]string{}
	for _, l := range message.Locales() {
		for _, k := range loaderTextKeys {
			t, ok := message.Loader.Text(k)
			if !ok {
				return nil, fmt.Errorf("site: the catalogue's Loader has no %q", k)
			}
			all[l] = append(all[l], t.In(l))
		}
	}
	return json.Marshal(all)
}
