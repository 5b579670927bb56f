// Command baseline is the floor of server/devtools/startrss: a bare net/http server
// answering one static body, built by the same toolchain as the gateway, so
// that the gateway's memory after start is read beside what any Go HTTP
// server costs on the same machine in the same run.
package main

import (
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	body := []byte("ok\n")
	log.Fatal(http.ListenAndServe(*addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(body)
	})))
}
