package api

import (
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// listParams reads limit, cursor and cursor_direction (UnivaPay's wire format).
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

// listOf converts a page of domain objects for the wire.
func listOf[D any, W any](conv func(D) W) func(payment.Page[D]) univapay.List[W] {
	return func(p payment.Page[D]) univapay.List[W] { return univapay.ListOf(p, conv) }
}

// answer is how most endpoints end: the service's result converted for the
// wire with a status, or the service's error.
func answer[T any, W any](status int, v T, err error, toWire func(T) W) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return status, toWire(v), nil
}

// pathIDs are the ids a route's path names; those it does not name are
// uuid.Nil (GET /charges/{id} has no store: the service finds it).
// merchantNamed says the path names a merchant (merchantPrefix), which
// must then be the caller's own.
type pathIDs struct {
	store, charge, id, event, payment, merchant uuid.UUID
	merchantNamed                               bool
}

// pathVariables are the route variables that name objects, and where
// idsOf puts each.
var pathVariables = [...]struct {
	name string
	dst  func(*pathIDs) *uuid.UUID
}{
	{"storeId", func(p *pathIDs) *uuid.UUID { return &p.store }},
	{"chargeId", func(p *pathIDs) *uuid.UUID { return &p.charge }},
	{"id", func(p *pathIDs) *uuid.UUID { return &p.id }},
	{"jwtId", func(p *pathIDs) *uuid.UUID { return &p.id }},
	{"eventId", func(p *pathIDs) *uuid.UUID { return &p.event }},
	{"paymentId", func(p *pathIDs) *uuid.UUID { return &p.payment }},
	{"merchantId", func(p *pathIDs) *uuid.UUID { return &p.merchant }},
}

// idsOf reads the matched route's ids. A variable that is not a UUID
// cannot name an object, so it is NOT_FOUND like any other unknown id.
func idsOf(r *http.Request) (pathIDs, error) {
	var ids pathIDs
	vars := mux.Vars(r)
	for _, v := range pathVariables {
		s, ok := vars[v.name]
		if !ok {
			continue
		}
		id, err := uuid.Parse(s)
		if err != nil {
			return ids, payment.NotFound(v.name)
		}
		*v.dst(&ids) = id
	}
	_, ids.merchantNamed = vars["merchantId"]
	return ids, nil
}
