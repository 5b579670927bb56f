# Kessai's commands. `make run` and `make test` are all a new user needs.
GO      ?= go
BIN     := bin/kessai
GOFILES := $(shell git ls-files '*.go' 2>/dev/null)

.PHONY: all build run test test-go conformance check bench clean

all: build

## build: the gateway binary (and the widget's assets once they exist)
build:
	$(GO) build -o $(BIN) ./server

## run: start the gateway with the demo storefront on an embedded store
run: build
	./$(BIN) serve

## test: every test suite: Go (with the race detector) and the SDK conformance suite
test: test-go conformance

test-go:
	$(GO) test -race -count=1 ./...

## conformance: drive a real gateway with the published univapay-node SDK
conformance: build
	cd server/conformance && npm ci --no-audit --no-fund --loglevel=error && node --test --test-reporter=spec

## check: formatting and static checks for the host and for js/wasm
check:
	@out=$$(gofmt -l $(GOFILES)); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./wasm/...
	$(GO) mod tidy -diff

## bench: the benchmarks, with memory figures
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
