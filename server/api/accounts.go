package api

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

type wireMerchant struct {
	ID            uuid.UUID      `json:"id"`
	Name          string         `json:"name"`
	Email         string         `json:"email"`
	Verified      bool           `json:"verified"`
	CreatedOn     wireTime       `json:"created_on"`
	Configuration map[string]any `json:"configuration"`
}

func (s *Server) getMe(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	m, err := s.svc.Me(r.Context(), c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wireMerchant{
		ID: m.ID, Name: m.Name, Email: m.Email, Verified: m.Verified,
		CreatedOn: wireTime(m.CreatedOn), Configuration: map[string]any{},
	}, nil
}

type wireStoreConfiguration struct {
	CardConfiguration wireCardConfiguration `json:"card_configuration"`
	Theme             wireTheme             `json:"theme"`
	LogoImage         *string               `json:"logo_image"`
}

type wireStore struct {
	ID            uuid.UUID              `json:"id"`
	MerchantID    uuid.UUID              `json:"merchant_id"`
	Name          string                 `json:"name"`
	CreatedOn     wireTime               `json:"created_on"`
	Configuration wireStoreConfiguration `json:"configuration"`
}

func toWireStore(st *payment.Store) wireStore {
	return wireStore{
		ID: st.ID, MerchantID: st.MerchantID, Name: st.Name, CreatedOn: wireTime(st.CreatedOn),
		Configuration: wireStoreConfiguration{
			CardConfiguration: toWireCardConfiguration(st.Settings),
			Theme:             toWireTheme(st.Settings.Theme),
			LogoImage:         optionalString(st.Settings.LogoImage),
		},
	}
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (s *Server) listStores(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Stores(r.Context(), c, p)
	return answer(http.StatusOK, page, err, listOf(toWireStore))
}

func (s *Server) getStore(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	st, err := s.svc.Store(r.Context(), c, ids.store)
	return answer(http.StatusOK, st, err, toWireStore)
}

type wireCustomerID struct {
	CustomerID string `json:"customer_id"`
}

func (s *Server) createCustomerID(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireCustomerID
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	id, err := s.svc.CustomerID(r.Context(), c, ids.store, req.CustomerID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wireCustomerID{CustomerID: id.String()}, nil
}
