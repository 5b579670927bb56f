package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/univapay"
)

// subscriptionRoutes are the subscription routes (UnivaPay's). Suspend,
// unsuspend, the token change, the list and simulate_plan take the store
// from the path or, without it, from the caller's token (the service finds
// it); the rest hang under /stores/{storeId}. Only POST /subscriptions is
// of the charge class (ratelimit.go): simulate_plan charges nothing.
func (s *Server) subscriptionRoutes(r *mux.Router) {
	get, post, patch, del := http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodDelete
	r.HandleFunc("/subscriptions", s.authed(s.createSubscription)).Methods(post)
	for _, prefix := range []string{"", "/stores/{storeId}"} {
		r.HandleFunc(prefix+"/subscriptions", s.authed(s.listSubscriptions)).Methods(get)
		r.HandleFunc(prefix+"/subscriptions/simulate_plan", s.authed(s.simulatePlan)).Methods(post)
		r.HandleFunc(prefix+"/subscriptions/{id}/suspend", s.authed(s.suspendSubscription)).Methods(patch)
		r.HandleFunc(prefix+"/subscriptions/{id}/unsuspend", s.authed(s.unsuspendSubscription)).Methods(patch)
		r.HandleFunc(prefix+"/subscriptions/{id}/token", s.authed(s.changeSubscriptionToken)).Methods(patch)
	}
	const sub = "/stores/{storeId}/subscriptions/{id}"
	r.HandleFunc(sub, s.authed(s.getSubscription)).Methods(get)
	r.HandleFunc(sub, s.authed(s.updateSubscription)).Methods(patch)
	r.HandleFunc(sub, s.authed(s.cancelSubscription)).Methods(del)
	r.HandleFunc(sub+"/charges", s.authed(s.listSubscriptionCharges)).Methods(get)
	r.HandleFunc(merchantPrefix+sub+"/charges", s.authed(s.listSubscriptionCharges)).Methods(get)
	r.HandleFunc(sub+"/charges/latest", s.authed(s.latestSubscriptionCharge)).Methods(get)
	r.HandleFunc(sub+"/payments", s.authed(s.listSubscriptionPayments)).Methods(get)
	r.HandleFunc(sub+"/payments/{paymentId}", s.authed(s.getSubscriptionPayment)).Methods(get)
	r.HandleFunc(sub+"/payments/{paymentId}", s.authed(s.updateSubscriptionPayment)).Methods(patch)
	r.HandleFunc(sub+"/payments/{paymentId}/charges", s.authed(s.listSubscriptionCharges)).Methods(get)
}

// ---- what requests carry

// dateJSON is a day in a request body: a YYYY-MM-DD string. Anything else
// is a type error, which decode turns into a VALIDATION_ERROR naming the
// field; a null is no date.
type dateJSON struct {
	Date payment.Date
	Set  bool
}

func (d *dateJSON) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*d = dateJSON{}
		return nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		if date, ok := payment.ParseDate(s); ok {
			*d = dateJSON{Date: date, Set: true}
			return nil
		}
	}
	return &json.UnmarshalTypeError{Value: "date", Type: reflect.TypeFor[payment.Date]()}
}

func (d dateJSON) ptr() *payment.Date {
	if !d.Set {
		return nil
	}
	v := d.Date
	return &v
}

// clearableString is a string of a PATCH where null clears the value:
// Set tells it was given at all (null gives "").
type clearableString struct {
	Value string
	Set   bool
}

func (c *clearableString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = clearableString{Set: true}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &json.UnmarshalTypeError{Value: "string", Type: reflect.TypeFor[string]()}
	}
	*c = clearableString{Value: s, Set: true}
	return nil
}

func (c clearableString) ptr() *string {
	if !c.Set {
		return nil
	}
	v := c.Value
	return &v
}

type wireScheduleSettingsInput struct {
	StartOn            dateJSON `json:"start_on"`
	ZoneID             string   `json:"zone_id"`
	PreserveEndOfMonth bool     `json:"preserve_end_of_month"`
	RetryInterval      string   `json:"retry_interval"`
	TerminationMode    string   `json:"termination_mode"`
}

// wirePlanInput is a subscription_plan or installment_plan asked for. PHP
// sends fixed_cycle_amount as a string (Money::getAmount), as it does
// every amount.
type wirePlanInput struct {
	PlanType         string     `json:"plan_type"`
	FixedCycles      amountJSON `json:"fixed_cycles"`
	FixedCycleAmount amountJSON `json:"fixed_cycle_amount"`
}

func (p *wirePlanInput) domain() *payment.SubscriptionPlan {
	if p == nil {
		return nil
	}
	// Far outside the bounds the service checks, whatever int's size.
	cycles := int(max(min(p.FixedCycles.Value, 1<<30), -1))
	return &payment.SubscriptionPlan{PlanType: p.PlanType, FixedCycles: cycles, FixedCycleAmount: p.FixedCycleAmount.Value}
}

// wireNewSubscription is the body of POST /subscriptions, and of
// simulate_plan (which adds payment_type and needs no token).
type wireNewSubscription struct {
	TransactionTokenID           string                     `json:"transaction_token_id"`
	Amount                       amountJSON                 `json:"amount"`
	Currency                     string                     `json:"currency"`
	InitialAmount                amountJSON                 `json:"initial_amount"`
	Period                       string                     `json:"period"`
	CyclicalPeriod               string                     `json:"cyclical_period"`
	ScheduleSettings             *wireScheduleSettingsInput `json:"schedule_settings"`
	SubscriptionPlan             *wirePlanInput             `json:"subscription_plan"`
	InstallmentPlan              *wirePlanInput             `json:"installment_plan"`
	FirstChargeAuthorizationOnly bool                       `json:"first_charge_authorization_only"`
	FirstChargeCaptureAfter      string                     `json:"first_charge_capture_after"`
	Descriptor                   string                     `json:"descriptor"`
	OnlyDirectCurrency           bool                       `json:"only_direct_currency"`
	ThreeDS                      *wireChargeThreeDSInput    `json:"three_ds"`
	Redirect                     *wireRedirectInput         `json:"redirect"`
	IPAddress                    string                     `json:"ip_address"`
	Metadata                     json.RawMessage            `json:"metadata"`
	PaymentType                  string                     `json:"payment_type"`
}

func (req *wireNewSubscription) domain() (payment.NewSubscription, error) {
	p := payment.NewSubscription{
		Amount: req.Amount.Value, Currency: req.Currency, InitialAmount: req.InitialAmount.ptr(),
		Period: req.Period, CyclicalPeriod: req.CyclicalPeriod,
		Plan: req.SubscriptionPlan.domain(), InstallmentPlan: req.InstallmentPlan.domain(),
		FirstChargeAuthorizationOnly: req.FirstChargeAuthorizationOnly, FirstChargeCaptureAfter: req.FirstChargeCaptureAfter,
		Charge: payment.NewCharge{
			Descriptor: req.Descriptor, OnlyDirectCurrency: req.OnlyDirectCurrency, IPAddress: req.IPAddress,
		},
	}
	if req.TransactionTokenID != "" {
		id, err := uuid.Parse(req.TransactionTokenID)
		if err != nil {
			return p, payment.Invalid("transaction_token_id", payment.ReasonInvalidUUID)
		}
		p.TokenID = id
	}
	if ss := req.ScheduleSettings; ss != nil {
		p.Schedule = payment.ScheduleSettings{
			StartOn: ss.StartOn.ptr(), ZoneID: ss.ZoneID, PreserveEndOfMonth: ss.PreserveEndOfMonth,
			RetryInterval: ss.RetryInterval, TerminationMode: ss.TerminationMode,
		}
	}
	p.Charge.ThreeDS, p.Charge.ExternalThreeDS = req.ThreeDS.domain()
	if req.Redirect != nil {
		p.Charge.RedirectEndpoint = req.Redirect.Endpoint
	}
	var err error
	p.Charge.Metadata, err = payment.ParseMetadata(req.Metadata, "metadata")
	return p, err
}

// decodeNewSubscription reads a new subscription (or a simulation) and
// its payment_type.
func (s *Server) decodeNewSubscription(r *http.Request) (payment.NewSubscription, string, error) {
	var req wireNewSubscription
	if err := s.decode(r, &req); err != nil {
		return payment.NewSubscription{}, "", err
	}
	p, err := req.domain()
	return p, req.PaymentType, err
}

// ---- handlers

func (s *Server) createSubscription(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, _, err := s.decodeNewSubscription(r)
	if err != nil {
		return 0, nil, err
	}
	p.Idempotency = idempotencyRef(r)
	return subscriptionCreated(s.svc.Subscriptions.CreateSubscription(r.Context(), c, p))
}

// subscriptionCreated is the answer of POST /subscriptions: also a
// retry's, after a crash, with the subscription as it is now
// (effectAnswer).
func subscriptionCreated(sub *payment.Subscription, err error) (int, any, error) {
	return answer(http.StatusCreated, sub, err, univapay.SubscriptionOf)
}

// simulatePlan answers a bare JSON array of the payments, not a list
// envelope: PHP reads it with SimpleList::fromResponse, which maps over the
// body itself (RequesterUtils::executePostSimpleList).
func (s *Server) simulatePlan(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, paymentType, err := s.decodeNewSubscription(r)
	if err != nil {
		return 0, nil, err
	}
	pays, err := s.svc.Subscriptions.SimulatePlan(r.Context(), c, ids.store, paymentType, p)
	return answer(http.StatusOK, pays, err, func(pays []*payment.ScheduledPayment) []univapay.SimulatedPayment {
		out := make([]univapay.SimulatedPayment, 0, len(pays))
		for _, p := range pays {
			out = append(out, univapay.SimulatedPaymentOf(p))
		}
		return out
	})
}

func (s *Server) getSubscription(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	sub, err := s.svc.Subscriptions.Subscription(r.Context(), c, ids.store, ids.id, s.pollWaitOf(r))
	return answer(http.StatusOK, sub, err, univapay.SubscriptionOf)
}

// statuses reads the statuses a list asks for: status, statuses[] (Node's
// arrays), statuses repeated or comma-separated.
func (q *query) statuses() []payment.SubscriptionStatus {
	var out []payment.SubscriptionStatus
	for _, name := range []string{"status", "statuses[]", "statuses"} {
		for _, v := range q.values[name] {
			for st := range strings.SplitSeq(v, ",") {
				st := payment.SubscriptionStatus(strings.TrimSpace(st))
				switch {
				case st == "":
				case !st.Valid():
					q.v.Add(strings.TrimSuffix(name, "[]"), payment.ReasonInvalidFormat)
				default:
					out = append(out, st)
				}
			}
		}
	}
	return out
}

func (s *Server) listSubscriptions(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	q := newQuery(r)
	f := payment.SubscriptionFilter{Mode: q.mode(), Statuses: q.statuses(), Search: q.str("search")}
	if err := q.err(); err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Subscriptions.Subscriptions(r.Context(), c, ids.store, f, p)
	return answer(http.StatusOK, page, err, listOf(univapay.SubscriptionOf))
}

// wireTermination carries a termination mode: in schedule_settings, where
// UnivaPay's API puts it, or at the top.
type wireTermination struct {
	TerminationMode  string `json:"termination_mode"`
	ScheduleSettings *struct {
		TerminationMode string `json:"termination_mode"`
	} `json:"schedule_settings"`
}

// terminationModeOf reads the termination mode of a cancel or a
// suspension from the body, or else from the query string: Node sends a
// DELETE's data there, flattened with dots
// (schedule_settings.termination_mode; api/RestAPI.js stringifyParams).
func (s *Server) terminationModeOf(r *http.Request) (string, error) {
	var req wireTermination
	if err := s.decode(r, &req); err != nil {
		return "", err
	}
	q := newQuery(r)
	modes := []string{req.TerminationMode, q.str("schedule_settings.termination_mode"), q.str("termination_mode")}
	if req.ScheduleSettings != nil {
		modes = append([]string{req.ScheduleSettings.TerminationMode}, modes...)
	}
	for _, mode := range modes {
		if mode != "" {
			return mode, nil
		}
	}
	return "", nil
}

func (s *Server) cancelSubscription(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	mode, err := s.terminationModeOf(r)
	if err != nil {
		return 0, nil, err
	}
	if err := s.svc.Subscriptions.CancelSubscription(r.Context(), c, ids.store, ids.id, mode); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (s *Server) suspendSubscription(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	mode, err := s.terminationModeOf(r)
	if err != nil {
		return 0, nil, err
	}
	sub, err := s.svc.Subscriptions.SuspendSubscription(r.Context(), c, ids.store, ids.id, mode)
	return answer(http.StatusOK, sub, err, univapay.SubscriptionOf)
}

func (s *Server) unsuspendSubscription(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	mode, err := s.terminationModeOf(r)
	if err != nil {
		return 0, nil, err
	}
	sub, err := s.svc.Subscriptions.UnsuspendSubscription(r.Context(), c, ids.store, ids.id, mode)
	return answer(http.StatusOK, sub, err, univapay.SubscriptionOf)
}

// parseTokenID reads a transaction_token_id; "" is none.
func parseTokenID(s string) (uuid.UUID, error) {
	if s == "" {
		return uuid.Nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, payment.Invalid("transaction_token_id", payment.ReasonInvalidUUID)
	}
	return id, nil
}

func (s *Server) changeSubscriptionToken(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req struct {
		TransactionTokenID string `json:"transaction_token_id"`
	}
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	tokenID, err := parseTokenID(req.TransactionTokenID)
	if err != nil {
		return 0, nil, err
	}
	sub, err := s.svc.Subscriptions.ChangeSubscriptionToken(r.Context(), c, ids.store, ids.id, tokenID)
	return answer(http.StatusOK, sub, err, univapay.SubscriptionOf)
}

// wirePaymentUpdate is a PATCH of a scheduled payment, or a subscription's
// next_payment: absent fields stay, a null terminate_with_status or
// retry_interval withdraws it.
type wirePaymentUpdate struct {
	DueDate             dateJSON        `json:"due_date"`
	IsPaid              *bool           `json:"is_paid"`
	TerminateWithStatus clearableString `json:"terminate_with_status"`
	RetryInterval       clearableString `json:"retry_interval"`
	Amount              amountJSON      `json:"amount"`
}

func (u *wirePaymentUpdate) domain() payment.PaymentUpdate {
	p := payment.PaymentUpdate{
		DueDate: u.DueDate.ptr(), IsPaid: u.IsPaid, RetryInterval: u.RetryInterval.ptr(), Amount: u.Amount.ptr(),
	}
	if u.TerminateWithStatus.Set {
		st := payment.SubscriptionStatus(u.TerminateWithStatus.Value)
		p.TerminateWithStatus = &st
	}
	return p
}

// wireSubscriptionUpdate is a PATCH of a subscription. UnivaPay's API lets
// a PATCH name fields Kessai cannot change once a subscription exists
// (its period, first payment and plan, when it starts, its zone): they are
// refused, NOT_UPDATABLE, rather than silently kept (the zone and start
// may be repeated as they are).
type wireSubscriptionUpdate struct {
	TransactionTokenID *string            `json:"transaction_token_id"`
	Amount             amountJSON         `json:"amount"`
	Status             *string            `json:"status"`
	Descriptor         *string            `json:"descriptor"`
	OnlyDirectCurrency *bool              `json:"only_direct_currency"`
	Metadata           json.RawMessage    `json:"metadata"`
	NextPayment        *wirePaymentUpdate `json:"next_payment"`
	ScheduleSettings   *struct {
		TerminationMode    *string         `json:"termination_mode"`
		RetryInterval      clearableString `json:"retry_interval"`
		PreserveEndOfMonth *bool           `json:"preserve_end_of_month"`
		StartOn            dateJSON        `json:"start_on"`
		ZoneID             *string         `json:"zone_id"`
	} `json:"schedule_settings"`

	Period                       json.RawMessage `json:"period"`
	CyclicalPeriod               json.RawMessage `json:"cyclical_period"`
	InitialAmount                json.RawMessage `json:"initial_amount"`
	SubscriptionPlan             json.RawMessage `json:"subscription_plan"`
	InstallmentPlan              json.RawMessage `json:"installment_plan"`
	FirstChargeAuthorizationOnly json.RawMessage `json:"first_charge_authorization_only"`
	FirstChargeCaptureAfter      json.RawMessage `json:"first_charge_capture_after"`
}

// sentField is a field of a body as it was sent.
type sentField struct {
	name string
	raw  json.RawMessage
}

// given reports whether a field was sent with a value (null is none).
func given(raw json.RawMessage) bool {
	return len(raw) > 0 && string(raw) != "null"
}

func (req *wireSubscriptionUpdate) domain() (payment.SubscriptionUpdate, error) {
	var v payment.Validation
	fixed := []sentField{
		{"period", req.Period}, {"cyclical_period", req.CyclicalPeriod}, {"initial_amount", req.InitialAmount},
		{"subscription_plan", req.SubscriptionPlan}, {"installment_plan", req.InstallmentPlan},
		{"first_charge_authorization_only", req.FirstChargeAuthorizationOnly},
		{"first_charge_capture_after", req.FirstChargeCaptureAfter},
	}
	for _, f := range fixed {
		if given(f.raw) {
			v.Add(f.name, "NOT_UPDATABLE")
		}
	}
	if err := v.Err(); err != nil {
		return payment.SubscriptionUpdate{}, err
	}
	u := payment.SubscriptionUpdate{
		Amount: req.Amount.ptr(), Descriptor: req.Descriptor, OnlyDirectCurrency: req.OnlyDirectCurrency,
	}
	if req.TransactionTokenID != nil {
		id, err := parseTokenID(*req.TransactionTokenID)
		if err != nil {
			return u, err
		}
		if id != uuid.Nil {
			u.TokenID = &id
		}
	}
	if req.Status != nil {
		st := payment.SubscriptionStatus(*req.Status)
		u.Status = &st
	}
	if ss := req.ScheduleSettings; ss != nil {
		u.TerminationMode, u.RetryInterval, u.PreserveEndOfMonth = ss.TerminationMode, ss.RetryInterval.ptr(), ss.PreserveEndOfMonth
		// The zone and the start cannot change; the same values sent
		// back are fine (the domain compares).
		u.ZoneID, u.StartOn = ss.ZoneID, ss.StartOn.ptr()
	}
	if req.NextPayment != nil {
		np := req.NextPayment.domain()
		u.NextPayment = &np
	}
	var err error
	u.Metadata, err = payment.ParseMetadata(req.Metadata, "metadata")
	return u, err
}

func (s *Server) updateSubscription(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wireSubscriptionUpdate
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	u, err := req.domain()
	if err != nil {
		return 0, nil, err
	}
	sub, err := s.svc.Subscriptions.UpdateSubscription(r.Context(), c, ids.store, ids.id, u)
	return answer(http.StatusOK, sub, err, univapay.SubscriptionOf)
}

// listSubscriptionCharges lists the charges of a subscription, or of one
// of its payments: items as GET /charges shows them.
func (s *Server) listSubscriptionCharges(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Subscriptions.SubscriptionCharges(r.Context(), c, ids.store, ids.id, ids.payment, p)
	return answer(http.StatusOK, page, err, listOf(univapay.ChargeOf))
}

func (s *Server) latestSubscriptionCharge(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	ch, err := s.svc.Subscriptions.LatestSubscriptionCharge(r.Context(), c, ids.store, ids.id)
	return answer(http.StatusOK, ch, err, univapay.ChargeOf)
}

func (s *Server) listSubscriptionPayments(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	p, err := listParams(r)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.svc.Subscriptions.SubscriptionPayments(r.Context(), c, ids.store, ids.id, p)
	return answer(http.StatusOK, page, err, listOf(univapay.ScheduledPaymentOf))
}

func (s *Server) getSubscriptionPayment(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	pay, err := s.svc.Subscriptions.SubscriptionPayment(r.Context(), c, ids.store, ids.id, ids.payment)
	return answer(http.StatusOK, pay, err, univapay.ScheduledPaymentOf)
}

func (s *Server) updateSubscriptionPayment(r *http.Request, c *payment.Caller, ids pathIDs) (int, any, error) {
	var req wirePaymentUpdate
	if err := s.decode(r, &req); err != nil {
		return 0, nil, err
	}
	pay, err := s.svc.Subscriptions.UpdateSubscriptionPayment(r.Context(), c, ids.store, ids.id, ids.payment, req.domain())
	return answer(http.StatusOK, pay, err, univapay.ScheduledPaymentOf)
}
