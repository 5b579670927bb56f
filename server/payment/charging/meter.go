package charging

import (
	"slices"

	"github.com/kessai/kessai/server/payment"
)

// settlement is what one transaction settled, told to the Meter once it
// has committed.
type settlement struct {
	kind, status, errorName string
}

// WorkKinds are the kinds of work this version carries out, sorted.
func WorkKinds() []payment.WorkKind {
	kinds := make([]payment.WorkKind, 0, len(workKinds))
	for k := range workKinds {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}
