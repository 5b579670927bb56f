package api

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
)

func muxVar(r *http.Request, name string) string { return mux.Vars(r)[name] }

type wireMerchant struct {
	ID            uuid.UUID      `json:"id"`
	Name          string         `json:"name"`
	Email         string         `json:"email"`
	Verified      bool           `json:"verified"`
	CreatedOn     wireTime       `json:"created_on"`
	Configuration map[string]any `json:"configuration"`
}

func (s *Server) getMe(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	m, err := s.svc.Me(r.Context(), c)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, wireMerchant{
		ID: m.ID, Name: m.Name, Email: m.Email, Verified: m.Verified,
		CreatedOn: wireTime(m.CreatedOn), Configuration: map[string]any{},
	})
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

func (s *Server) listStores(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	p, err := listParams(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	page, err := s.svc.Stores(r.Context(), c, p)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireList(page, toWireStore))
}

func (s *Server) getStore(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	id, err := pathID(r, "storeId")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	st, err := s.svc.Store(r.Context(), c, id)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, toWireStore(st))
}

type wireCustomerID struct {
	CustomerID string `json:"customer_id"`
}

func (s *Server) createCustomerID(w http.ResponseWriter, r *http.Request, c *payment.Caller) {
	storeID, err := pathID(r, "storeId")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req wireCustomerID
	if err := s.decode(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	id, err := s.svc.CustomerID(r.Context(), c, storeID, req.CustomerID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, wireCustomerID{CustomerID: id.String()})
}
