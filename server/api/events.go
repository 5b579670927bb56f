package api

import (
	"encoding/json"

	"github.com/kessai/kessai/server/univapay"
)

// EncodeEvent is univapay.EncodeEvent, kept for the callers outside
// server/ that still name it here (web/'s tests).
//
// Deprecated: use univapay.EncodeEvent; the wire format is not the HTTP
// package's.
func EncodeEvent(resource any) (json.RawMessage, error) { return univapay.EncodeEvent(resource) }
