package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// wirePhoneInput is a phone number in a request.
type wirePhoneInput struct {
	CountryCode countryCodeJSON `json:"country_code"`
	LocalNumber string          `json:"local_number"`
}

type wireThreeDSRequest struct {
	Enabled          bool   `json:"enabled"`
	Mode             string `json:"mode"`
	RedirectEndpoint string `json:"redirect_endpoint"`
	RedirectID       string `json:"redirect_id"`
}

// wireNewCard is a new token's data: a card's, a wallet's (brand and the
// three fields after it), a konbini's or a bank transfer's (the four
// after those, and phone_number), as payment_type says.
type wireNewCard struct {
	Brand          string `json:"brand"`
	CallMethod     string `json:"call_method"`
	OSType         string `json:"os_type"`
	UserIdentifier string `json:"user_identifier"`

	CustomerName        string `json:"customer_name"`
	ConvenienceStore    string `json:"convenience_store"`
	ExpirationPeriod    string `json:"expiration_period"`
	ExpirationTimeShift string `json:"expiration_time_shift"`

	Cardholder   string          `json:"cardholder"`
	CardNumber   string          `json:"card_number"`
	ExpMonth     json.RawMessage `json:"exp_month"`
	ExpYear      json.RawMessage `json:"exp_year"`
	CVV          string          `json:"cvv"`
	Line1        string          `json:"line1"`
	Line2        string          `json:"line2"`
	State        string          `json:"state"`
	City         string          `json:"city"`
	Country      string          `json:"country"`
	Zip          string          `json:"zip"`
	PhoneNumber  *wirePhoneInput `json:"phone_number"`
	CVVAuthorize *struct {
		Enabled  bool   `json:"enabled"`
		Currency string `json:"currency"`
	} `json:"cvv_authorize"`
	ThreeDS *wireThreeDSRequest `json:"three_ds"`
}

type wireNewToken struct {
	PaymentType string              `json:"payment_type"`
	Type        *string             `json:"type"`
	UsageLimit  string              `json:"usage_limit"`
	Email       string              `json:"email"`
	Metadata    json.RawMessage     `json:"metadata"`
	IPAddress   string              `json:"ip_address"`
	ThreeDS     *wireThreeDSRequest `json:"three_ds"`
	Data        *wireNewCard        `json:"data"`
}

func (w *wireNewCard) billing() payment.Billing {
	b := payment.Billing{Line1: w.Line1, Line2: w.Line2, State: w.State, City: w.City, Country: w.Country, Zip: w.Zip}
	if w.PhoneNumber != nil {
		b.PhoneNumber = &payment.Phone{CountryCode: int(w.PhoneNumber.CountryCode), LocalNumber: w.PhoneNumber.LocalNumber}
	}
	return b
}

// slip is the data of a konbini or bank-transfer token. Stores and
// brands are taken in any case (PHP writes its enums' names); the period
// is an ISO 8601 duration, which must be more than nothing (a zero
// period is out of bounds, not the default).
func (w *wireNewCard) slip() (*payment.TokenData, error) {
	d := &payment.TokenData{
		Brand: strings.ToLower(w.Brand), CustomerName: w.CustomerName,
		ConvenienceStore: strings.ToLower(w.ConvenienceStore), ExpirationTimeShift: w.ExpirationTimeShift,
	}
	if w.PhoneNumber != nil {
		d.PhoneNumber = &payment.Phone{CountryCode: int(w.PhoneNumber.CountryCode), LocalNumber: w.PhoneNumber.LocalNumber}
	}
	if w.ExpirationPeriod != "" {
		period, ok := payment.ParsePaymentPeriod(w.ExpirationPeriod)
		if !ok {
			return nil, payment.Invalid("expiration_period", payment.ReasonInvalidFormat)
		}
		if period <= 0 {
			return nil, payment.Invalid("expiration_period", payment.ReasonExpirationOutOfBounds)
		}
		d.ExpirationPeriod = period
	}
	return d, nil
}

func (w *wireNewToken) domain() (payment.NewToken, error) {
	p := payment.NewToken{
		PaymentType: w.PaymentType, UsageLimit: w.UsageLimit, Email: w.Email, IPAddress: w.IPAddress,
	}
	// Absent or null, the type is left to the domain's default; an empty
	// string is a value, and not a type.
	if w.Type != nil {
		if *w.Type == "" {
			return p, payment.Invalid("type", payment.ReasonInvalidFormat)
		}
		p.Type = payment.TokenType(*w.Type)
	}
	var err error
	if p.Metadata, err = payment.ParseMetadata(w.Metadata, "metadata"); err != nil {
		return p, err
	}
	if w.ThreeDS != nil {
		p.ThreeDS = &payment.ThreeDSSettings{
			Enabled: w.ThreeDS.Enabled, Mode: w.ThreeDS.Mode,
			RedirectEndpoint: w.ThreeDS.RedirectEndpoint, RedirectID: w.ThreeDS.RedirectID,
		}
	}
	if d := w.Data; d != nil && (w.PaymentType == payment.PaymentTypeOnline || w.PaymentType == payment.PaymentTypeQRMerchant) {
		// The PHP SDK writes these three as its enums' names (PAY_PAY_ONLINE,
		// HTTP_GET, IOS), not their values: one word either way.
		p.Data = &payment.TokenData{
			Brand: strings.ToLower(d.Brand), CallMethod: strings.ToLower(d.CallMethod), OSType: strings.ToLower(d.OSType),
			UserIdentifier: d.UserIdentifier,
		}
		if d.CardNumber == "" {
			return p, nil
		}
		// Card data in a wallet's token is refused by the domain.
	}
	if d := w.Data; d != nil && (w.PaymentType == payment.PaymentTypeKonbini || w.PaymentType == payment.PaymentTypeBankTransfer) {
		td, err := d.slip()
		if err != nil {
			return p, err
		}
		p.Data = td
		if d.CardNumber == "" {
			return p, nil
		}
	}
	if d := w.Data; d != nil {
		c := &payment.CardInput{Cardholder: d.Cardholder, Number: d.CardNumber, CVV: d.CVV, Billing: d.billing()}
		month, err := flexInt(d.ExpMonth, "exp_month")
		if err != nil {
			return p, err
		}
		year, err := flexInt(d.ExpYear, "exp_year")
		if err != nil {
			return p, err
		}
		if month != nil {
			c.ExpMonth = *month
		}
		if year != nil {
			c.ExpYear = *year
		}
		if d.CVVAuthorize != nil {
			c.CVVAuthorize = payment.CVVAuthorize{Enabled: d.CVVAuthorize.Enabled, Currency: d.CVVAuthorize.Currency}
		}
		if d.ThreeDS != nil {
			c.ThreeDS = payment.ThreeDSSettings{Enabled: d.ThreeDS.Enabled, RedirectEndpoint: d.ThreeDS.RedirectEndpoint}
		}
		p.Card = c
	}
	return p, nil
}

func (s *Server) createToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireNewToken
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	p, err := req.domain()
	if err != nil {
		return 0, nil, err
	}
	tok, err := s.svc.Tokens.CreateToken(r.Context(), c, p)
	return answer(http.StatusCreated, tok, err, univapay.TokenOf)
}

func (s *Server) getToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	tok, err := s.svc.Tokens.Token(r.Context(), c, ids.store, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, tok, err, univapay.TokenOf)
}

func (s *Server) listTokens(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	q := newQuery(r)
	f := payment.TokenFilter{
		Mode:       q.mode(),
		Type:       payment.TokenType(q.oneOf("type", "one_time", "subscription", "recurring")),
		CustomerID: q.str("customer_id"),
		Email:      q.str("email"),
		Search:     q.str("search"),
	}
	// PHP's SDK writes its ActiveFilter enum: active, inactive or all.
	switch a := q.oneOf("active", "active", "inactive", "all", "true", "false"); a {
	case "active", "true", "inactive", "false":
		active := a == "active" || a == "true"
		f.Active = &active
	}
	f.PaymentType = q.oneOf("payment_type", payment.PaymentTypeCard, payment.PaymentTypeOnline, payment.PaymentTypeQRMerchant,
		payment.PaymentTypeKonbini, payment.PaymentTypeBankTransfer)
	if err := q.err(); err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Tokens.Tokens(r.Context(), c, ids.store, f, p)
	return answer(http.StatusOK, page, err, listOf(univapay.TokenOf))
}

type wireTokenUpdate struct {
	Email    *string         `json:"email"`
	Metadata json.RawMessage `json:"metadata"`
	Data     *struct {
		CVV      *string         `json:"cvv"`
		ExpMonth json.RawMessage `json:"exp_month"`
		ExpYear  json.RawMessage `json:"exp_year"`
		Line1    string          `json:"line1"`
		Line2    string          `json:"line2"`
		State    string          `json:"state"`
		City     string          `json:"city"`
		Country  string          `json:"country"`
		Zip      string          `json:"zip"`
		Phone    *wirePhoneInput `json:"phone_number"`
	} `json:"data"`
}

func (s *Server) updateToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireTokenUpdate
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	u := payment.TokenUpdate{Email: req.Email}
	var err error
	if u.Metadata, err = payment.ParseMetadata(req.Metadata, "metadata"); err != nil {
		return 0, nil, err
	}
	if d := req.Data; d != nil {
		u.CVV = d.CVV
		if u.ExpMonth, err = flexInt(d.ExpMonth, "exp_month"); err != nil {
			return 0, nil, err
		}
		if u.ExpYear, err = flexInt(d.ExpYear, "exp_year"); err != nil {
			return 0, nil, err
		}
		if d.Line1+d.Line2+d.State+d.City+d.Country+d.Zip != "" || d.Phone != nil {
			nc := wireNewCard{Line1: d.Line1, Line2: d.Line2, State: d.State, City: d.City, Country: d.Country, Zip: d.Zip, PhoneNumber: d.Phone}
			b := nc.billing()
			u.Billing = &b
		}
	}
	tok, err := s.svc.Tokens.UpdateToken(r.Context(), c, ids.store, ids.id, u)
	return answer(http.StatusOK, tok, err, univapay.TokenOf)
}

func (s *Server) deleteToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	if err := s.svc.Tokens.DeleteToken(r.Context(), c, ids.store, ids.id); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
