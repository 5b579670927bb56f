package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestLogFormats: KESSAI_LOG_FORMAT=json writes one JSON object a line
// with the same keys the text format writes, request lines included.
func TestLogFormats(t *testing.T) {
	textKey := regexp.MustCompile(`(?:^| )([a-z_]+)=`)
	keysOfRequestLine := func(format string) []string {
		g := startGateway(t, gatewayOptions{configure: func(c *config) { c.LogFormat = format }})
		resp, err := http.Get(g.url + "/heartbeat")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		g.stop()
		var keys []string
		lines := 0
		sc := bufio.NewScanner(strings.NewReader(g.logs.String()))
		for sc.Scan() {
			line := sc.Text()
			lines++
			if format == logJSON {
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
			t.Fatalf("%s: %d lines, no request line:\n%s", format, lines, g.logs)
		}
		slices.Sort(keys)
		return keys
	}
	text, js := keysOfRequestLine(logText), keysOfRequestLine(logJSON)
	if !slices.Equal(text, js) {
		t.Errorf("request line keys: text %v, json %v", text, js)
	}
	for _, want := range []string{"time", "level", "msg", "request_id", "method", "path", "status"} {
		if !slices.Contains(js, want) {
			t.Errorf("json request line lacks %q: %v", want, js)
		}
	}
}
