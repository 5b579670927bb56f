package api

import (
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// listParams reads limit, cursor and cursor_direction (reference §6).
func listParams(r *http.Request) (payment.ListParams, error) {
	q := r.URL.Query()
	p := payment.ListParams{Limit: payment.DefaultLimit, Direction: payment.Desc}
	var v payment.Validation
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		switch {
		case err != nil:
			v.Add("limit", payment.ReasonInvalidFormat)
		case n < 1:
			v.Add("limit", payment.ReasonNumberMin)
		case n > payment.MaxLimit:
			v.Add("limit", payment.ReasonNumberMax)
		default:
			p.Limit = n
		}
	}
	if s := q.Get("cursor"); s != "" {
		id, err := uuid.Parse(s)
		if err != nil {
			v.Add("cursor", payment.ReasonInvalidUUID)
		}
		p.Cursor = id
	}
	switch d := q.Get("cursor_direction"); d {
	case "", "desc":
	case "asc":
		p.Direction = payment.Asc
	default:
		v.Add("cursor_direction", payment.ReasonInvalidFormat)
	}
	return p, v.Err()
}

// wireList is a page on the wire.
type wireList[T any] struct {
	Items     []T  `json:"items"`
	HasMore   bool `json:"has_more"`
	TotalHits *int `json:"total_hits,omitempty"`
}

func toWireList[D any, W any](p payment.Page[D], conv func(D) W) wireList[W] {
	out := wireList[W]{Items: make([]W, 0, len(p.Items)), HasMore: p.HasMore, TotalHits: p.TotalHits}
	for _, item := range p.Items {
		out.Items = append(out.Items, conv(item))
	}
	return out
}

// pathID reads a UUID path variable; anything that is not one cannot name
// an object, so it is NOT_FOUND like any other unknown id.
func pathID(r *http.Request, name string) (uuid.UUID, error) {
	id, err := uuid.Parse(muxVar(r, name))
	if err != nil {
		return uuid.Nil, payment.NotFound(name)
	}
	return id, nil
}
