package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// wireAppJWT is an application JWT as the Java SDK reads it. The secret is
// present only in the answer to its creation.
type wireAppJWT struct {
	JTI        uuid.UUID    `json:"jti"`
	MerchantID uuid.UUID    `json:"merchant_id"`
	StoreID    *uuid.UUID   `json:"store_id,omitempty"`
	CreatorID  uuid.UUID    `json:"creator_id"`
	Mode       payment.Mode `json:"mode"`
	Domains    []string     `json:"domains"`
	JWT        string       `json:"jwt"`
	Secret     string       `json:"secret,omitempty"`
	CreatedOn  wireTime     `json:"created_on"`
}

func toWireAppJWT(t *payment.AppToken) wireAppJWT {
	w := wireAppJWT{
		JTI: t.ID, MerchantID: t.MerchantID, CreatorID: t.CreatorID, Mode: t.Mode,
		Domains: t.Domains, JWT: t.JWT, CreatedOn: wireTime(t.CreatedOn),
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

// optionalStoreID reads {storeId} when the route has one; merchant-level
// routes have none and mean the merchant's own tokens.
func optionalStoreID(r *http.Request) (uuid.UUID, error) {
	if muxVar(r, "storeId") == "" {
		return uuid.Nil, nil
	}
	return pathID(r, "storeId")
}

type wireNewAppJWT struct {
	Mode    payment.Mode `json:"mode"`
	Domains []string     `json:"domains"`
}

func (s *Server) createAppJWT(r *http.Request, c *payment.Caller) (int, any, error) {
	storeID, err := optionalStoreID(r)
	if err != nil {
		return 0, nil, err
	}
	var req wireNewAppJWT
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	issued, err := s.svc.CreateAppToken(r.Context(), c, storeID, payment.NewAppToken{Mode: req.Mode, Domains: req.Domains})
	if err != nil {
		return 0, nil, err
	}
	out := toWireAppJWT(issued.AppToken)
	out.Secret = issued.Secret
	return http.StatusCreated, out, nil
}

func (s *Server) listAppJWTs(r *http.Request, c *payment.Caller) (int, any, error) {
	storeID, err := optionalStoreID(r)
	if err != nil {
		return 0, nil, err
	}
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.AppTokens(r.Context(), c, storeID, p)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, toWireList(page, toWireAppJWT), nil
}

func (s *Server) deleteAppJWT(r *http.Request, c *payment.Caller) (int, any, error) {
	storeID, err := optionalStoreID(r)
	if err != nil {
		return 0, nil, err
	}
	id, err := pathID(r, "jwtId")
	if err != nil {
		return 0, nil, err
	}
	if err := s.svc.RevokeAppToken(r.Context(), c, storeID, id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
