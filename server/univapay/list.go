package univapay

import "github.com/kessai/kessai/server/payment"

// List is a page on the wire: the envelope of every list answer.
type List[T any] struct {
	Items     []T  `json:"items"`
	HasMore   bool `json:"has_more"`
	TotalHits *int `json:"total_hits,omitempty"`
}

// ListOf shows a page, each item as show has it. An empty page has items
// [], never null.
func ListOf[D any, W any](p payment.Page[D], show func(D) W) List[W] {
	out := List[W]{Items: make([]W, 0, len(p.Items)), HasMore: p.HasMore, TotalHits: p.TotalHits}
	for _, item := range p.Items {
		out.Items = append(out.Items, show(item))
	}
	return out
}
