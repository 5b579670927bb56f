package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// wireAppJWT is an application JWT as the Java SDK reads it. The secret is
// present only in the answer to its creation.
type wireAppJWT struct {
	JTI        uuid.UUID     `json:"jti"`
	MerchantID uuid.UUID     `json:"merchant_id"`
	StoreID    *uuid.UUID    `json:"store_id,omitempty"`
	CreatorID  uuid.UUID     `json:"creator_id"`
	Mode       payment.Mode  `json:"mode"`
	Domains    []string      `json:"domains"`
	JWT        string        `json:"jwt"`
	Secret     string        `json:"secret,omitempty"`
	CreatedOn  univapay.Time `json:"created_on"`
}

func toWireAppJWT(t *payment.AppToken) wireAppJWT {
	w := wireAppJWT{
		JTI: t.ID, MerchantID: t.MerchantID, CreatorID: t.CreatorID, Mode: t.Mode,
		Domains: t.Domains, JWT: t.JWT, CreatedOn: univapay.Time(t.CreatedOn),
	}
	if w.Domains == nil {
		w.Domains = []string{}
	}
	if !t.IsMerchantToken() {
		id := t.StoreID
		w.StoreID = &id
	}
	return w
}

type wireNewAppJWT struct {
	Mode    payment.Mode `json:"mode"`
	Domains []string     `json:"domains"`
}

func (s *Server) createAppJWT(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireNewAppJWT
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	issued, err := s.svc.Access.CreateAppToken(r.Context(), c, ids.store, payment.NewAppToken{Mode: req.Mode, Domains: req.Domains})
	if err != nil {
		return 0, nil, err
	}
	out := toWireAppJWT(issued.AppToken)
	out.Secret = issued.Secret
	return http.StatusCreated, out, nil
}

func (s *Server) listAppJWTs(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Access.AppTokens(r.Context(), c, ids.store, p)
	return answer(http.StatusOK, page, err, listOf(toWireAppJWT))
}

func (s *Server) deleteAppJWT(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	if err := s.svc.Access.RevokeAppToken(r.Context(), c, ids.store, ids.id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
