//go:build kessai_crashpoints

package gateway

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"
)

// crashpoint is the hook of the crash point before an idempotent answer is
// stored, when KESSAI_CRASHPOINT names it (crashpoint.go): the request
// says it got there and stops, never storing its answer.
func crashpoint(log *slog.Logger) func(*http.Request) {
	if os.Getenv(CrashpointEnv) != CrashpointBeforeAnswerStored {
		return nil
	}
	log.Warn("crash-test build: requests with an Idempotency-Key stop before their answer is stored",
		"point", CrashpointBeforeAnswerStored)
	return func(*http.Request) {
		fmt.Fprintln(os.Stderr, CrashpointMarker+CrashpointBeforeAnswerStored)
		select {} // until the kill
	}
}
