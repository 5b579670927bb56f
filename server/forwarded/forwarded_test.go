package forwarded_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kessai/kessai/server/forwarded"
)

// proxyHeaders are, by family, headers that proxies, balancers and CDNs
// add to what they forward.
var proxyHeaders = map[string][]string{
	"forwarded": {"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Port",
		"X-Forwarded-Server", "X-Original-Forwarded-For", "x-forwarded-for"},
	"via": {"Via", "VIA"},
	"client address": {"X-Real-Ip", "True-Client-Ip", "Cf-Connecting-Ip", "Cf-Connecting-Ipv6", "X-Client-Ip", "Client-Ip",
		"X-Cluster-Client-Ip", "Fastly-Client-Ip", "X-Originating-Ip", "X-Remote-Ip", "X-Remote-Addr", "X-ProxyUser-Ip",
		"X-Azure-ClientIP", "X-Azure-SocketIP", "X-Appengine-User-Ip", "X-Envoy-External-Address", "X-Real-IP"},
	"cdn": {"Cf-Ray", "Cf-Visitor", "Cf-Ipcountry", "Cdn-Loop", "Fastly-Ssl", "Akamai-Origin-Hop", "X-Amzn-Trace-Id",
		"X-Amz-Cf-Id", "Cloudfront-Viewer-Address", "X-Arr-Log-Id", "X-Envoy-Attempt-Count", "X-Original-Url", "X-Varnish"},
	// What a proxy says of the original request's scheme or host, or of
	// itself, without a Forwarded name: ingress-nginx's X-Scheme, ARR's and
	// ISA's Front-End-Https, X-Url-Scheme, the X-NginX-Proxy of many an
	// nginx configuration, X-Host.
	"scheme and host": {"X-Scheme", "X-Url-Scheme", "Front-End-Https", "X-Nginx-Proxy", "X-Host"},
}

// ordinaryHeaders are what browsers, SDKs and curl send themselves.
var ordinaryHeaders = []string{"Host", "User-Agent", "Accept", "Accept-Language", "Accept-Encoding", "Authorization",
	"Cookie", "Content-Type", "Content-Length", "Origin", "Referer", "Sec-Fetch-Site", "Sec-Fetch-Mode", "Sec-Ch-Ua",
	"Upgrade-Insecure-Requests", "Idempotency-Key", "X-Requested-With", "X-Request-Id", "Cache-Control", "Connection",
	"If-None-Match", "Priority", "Dnt", "Te"}

func TestHeader(t *testing.T) {
	for family, names := range proxyHeaders {
		for _, name := range names {
			if !forwarded.Header(name) {
				t.Errorf("%s (%s) is not told to be a proxy's header", name, family)
			}
			h := http.Header{}
			h.Set(name, "")
			if !forwarded.Proxied(h) {
				t.Errorf("a request with an empty %s (%s) is not told to be proxied", name, family)
			}
		}
	}
	for _, name := range ordinaryHeaders {
		if forwarded.Header(name) || forwarded.Header(strings.ToUpper(name)) {
			t.Errorf("%s is told to be a proxy's header", name)
		}
	}
	h := http.Header{}
	for _, name := range ordinaryHeaders {
		h.Set(name, "203.0.113.7")
	}
	if forwarded.Proxied(h) {
		t.Error("a request with only ordinary headers is told to be proxied")
	}
}
