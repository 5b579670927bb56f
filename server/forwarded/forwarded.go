// Package forwarded tells whether a request came through a proxy, from
// the headers proxies, load balancers and CDNs add to what they forward.
//
// It is a list of header families, not a parser: the API reads the one
// header it believes from its trusted proxies (X-Forwarded-For) itself.
// Its use is refusing what only a request from this machine may have (the
// console's local mailbox), and telling a proxy's own request from one it
// forwards for a client it names in a header that is not read.
//
// A proxy that adds none of these headers (nginx's plain proxy_pass, a
// TCP tunnel) cannot be told apart by them: what may only be served
// locally must also be turned on by the operator.
package forwarded

import (
	"net/http"
	"strings"
)

// Header reports whether a header of this name (any case) is one a proxy,
// load balancer or CDN adds to a request it forwards.
func Header(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	switch {
	// Forwarded (RFC 7239) and its forerunners: X-Forwarded-For, -Host,
	// -Proto, -Port, -Server, X-Original-Forwarded-For.
	case strings.Contains(name, "forwarded"):
		return true
	// Via (RFC 9110, section 7.6.3), which every HTTP proxy should add.
	case name == "via":
		return true
	// A header naming the client's address: X-Real-Ip, True-Client-Ip,
	// Cf-Connecting-Ip(v6), X-Client-Ip, Client-Ip, X-Cluster-Client-Ip,
	// Fastly-Client-Ip, X-Originating-Ip, X-Remote-Addr,
	// X-Azure-ClientIP, X-Envoy-External-Address, …
	case clientAddress(name):
		return true
	// What a CDN or cloud balancer adds besides: Cf-Ray, Cdn-Loop,
	// Fastly-*, Akamai-*, X-Amzn-Trace-Id, X-Envoy-*, X-Original-URL, …
	case hasAnyPrefix(name, cdnPrefixes):
		return true
	// The original request's scheme or host, or the proxy naming itself,
	// in names without "forwarded": X-Scheme (ingress-nginx),
	// Front-End-Https (ARR, ISA), X-Url-Scheme, X-NginX-Proxy, X-Host.
	case name == "x-scheme", name == "x-url-scheme", name == "front-end-https", name == "x-nginx-proxy", name == "x-host":
		return true
	}
	return false
}

// clientAddress reports whether a (lower-case) header name is one naming
// a client's address: its last word is an address's name.
func clientAddress(name string) bool {
	last := name[strings.LastIndexByte(name, '-')+1:]
	switch last {
	case "ip", "ipv4", "ipv6", "addr", "address", "clientip", "socketip", "realip":
		return true
	}
	return strings.Contains(name, "client-ip") || strings.Contains(name, "real-ip")
}

// cdnPrefixes start the names of the headers CDNs and cloud balancers add.
var cdnPrefixes = []string{
	"cf-", "cdn-loop", "fastly-", "akamai-", "x-akamai-", "x-amzn-", "x-amz-cf-", "cloudfront-",
	"x-azure-", "x-arr-", "x-appengine-", "x-cloud-trace-", "x-envoy-", "x-vercel-", "x-nf-",
	"x-original-", "x-varnish", "x-proxy",
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Proxied reports whether h holds any header Header names, whatever its
// value (an empty Via still says a proxy was there).
func Proxied(h http.Header) bool {
	for name := range h {
		if Header(name) {
			return true
		}
	}
	return false
}
