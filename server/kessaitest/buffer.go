package kessaitest

import (
	"bytes"
	"sync"
)

// Buffer collects what a gateway logs or prints from its goroutines while a
// test reads it. It is safe for concurrent use; the zero value is empty.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
