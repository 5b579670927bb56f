package gateway_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/gateway"
	"github.com/kessai/kessai/server/gateway/gatewaytest"
)

// TestLogFormats: KESSAI_LOG_FORMAT=json writes one JSON object a line
// with the same keys the text format writes, request lines included.
func TestLogFormats(t *testing.T) {
	textKey := regexp.MustCompile(`(?:^| )([a-z_]+)=`)
	keysOfRequestLine := func(format string) []string {
		g := gatewaytest.Start(t, gatewaytest.Options{Configure: func(c *gateway.Config) { c.LogFormat = format }})
		resp, err := http.Get(g.URL + "/heartbeat")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		g.Stop()
		var keys []string
		lines := 0
		sc := bufio.NewScanner(strings.NewReader(g.Logs.String()))
		for sc.Scan() {
			line := sc.Text()
			lines++
			if format == gateway.LogJSON {
				var m map[string]any
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("json log line %q: %v", line, err)
				}
				if m["msg"] == "request" && m["path"] == "/heartbeat" {
					for k := range m {
						keys = append(keys, k)
					}
				}
				continue
			}
			if strings.Contains(line, "msg=request ") && strings.Contains(line, "path=/heartbeat ") {
				for _, m := range textKey.FindAllStringSubmatch(line, -1) {
					keys = append(keys, m[1])
				}
			}
		}
		if lines == 0 || len(keys) == 0 {
			t.Fatalf("%s: %d lines, no request line:\n%s", format, lines, g.Logs)
		}
		slices.Sort(keys)
		return keys
	}
	text, js := keysOfRequestLine(gateway.LogText), keysOfRequestLine(gateway.LogJSON)
	if !slices.Equal(text, js) {
		t.Errorf("request line keys: text %v, json %v", text, js)
	}
	for _, want := range []string{"time", "level", "msg", "request_id", "method", "path", "status"} {
		if !slices.Contains(js, want) {
			t.Errorf("json request line lacks %q: %v", want, js)
		}
	}
}
