//go:build js && wasm

// Command floor is an empty js/wasm program: the size and start-up time of
// the Go runtime alone, built the same way as the widget (make wasm-floor),
// so that the widget's budget report can say how much of it is the widget.
package main

func main() {}
