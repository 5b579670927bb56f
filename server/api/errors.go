package api

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/kessai/kessai/server/payment"
)

// statusByCode is the one table from error code to HTTP status, UnivaPay's
// for each code it shares. A code missing here is a programming error and
// answers 500.
var statusByCode = map[payment.Code]int{
	payment.CodeValidation:                   http.StatusBadRequest,
	payment.CodeResourceLimit:                http.StatusBadRequest,
	payment.CodeNoTestCardInLiveMode:         http.StatusBadRequest,
	payment.CodeNoGatewaysAvailable:          http.StatusBadRequest,
	payment.CodeTransactionAlreadyDone:       http.StatusBadRequest,
	payment.CodeNotOneTimeToken:              http.StatusBadRequest,
	payment.CodeTokenForWrongStore:           http.StatusBadRequest,
	payment.CodeProcessingModeMismatch:       http.StatusBadRequest,
	payment.CodeTokenExpired:                 http.StatusBadRequest,
	payment.CodeChargeAmountTooLow:           http.StatusBadRequest,
	payment.CodeChargeAmountTooHigh:          http.StatusBadRequest,
	payment.CodeAlreadyCaptured:              http.StatusBadRequest,
	payment.CodeCaptureAmountTooLarge:        http.StatusBadRequest,
	payment.CodeRefundExceedsCharge:          http.StatusBadRequest,
	payment.CodeCannotRefundUnsuccessful:     http.StatusBadRequest,
	payment.CodeCurrencyMustMatchCharge:      http.StatusBadRequest,
	payment.CodeCancelNotAllowed:             http.StatusBadRequest,
	payment.CodeCardBrandNotSupported:        http.StatusBadRequest,
	payment.CodeRecurringTokenDisabled:       http.StatusBadRequest,
	payment.CodeRecurringUsageLimit:          http.StatusBadRequest,
	payment.CodeCVVAuthorizationNotCompleted: http.StatusBadRequest,
	payment.CodeNotSubscriptionToken:         http.StatusBadRequest,
	payment.CodeCannotChangeCanceled:         http.StatusBadRequest,
	payment.CodeSubscriptionEnded:            http.StatusBadRequest,
	payment.CodeInvalidTokenType:             http.StatusBadRequest,
	payment.CodeNonSubscriptionPayment:       http.StatusBadRequest,
	payment.CodeInstallmentsNotEnabled:       http.StatusForbidden,
	payment.CodeConvenienceDisabled:          http.StatusBadRequest,
	payment.CodePaymentTypeNotAllowed:        http.StatusBadRequest,
	payment.CodeRefundNotAllowed:             http.StatusBadRequest,
	payment.CodeCurrencyNotSupported:         http.StatusBadRequest,
	payment.CodeMaxExpiryExtensionExceeded:   http.StatusBadRequest,
	payment.CodePositiveExtensionRequired:    http.StatusBadRequest,
	payment.CodeEitherPeriodOrDate:           http.StatusBadRequest,
	payment.CodeMaximumExtensionsReached:     http.StatusBadRequest,
	payment.CodeTestModeOnly:                 http.StatusForbidden,
	payment.CodeDirectCardTokenDisabled:      http.StatusUnauthorized,
	payment.CodeAuthHeaderMissing:            http.StatusUnauthorized,
	payment.CodeInvalidAppToken:              http.StatusUnauthorized,
	payment.CodeInvalidDomain:                http.StatusUnauthorized,
	payment.CodeInvalidPermissions:           http.StatusForbidden,
	payment.CodeNotFound:                     http.StatusNotFound,
	payment.CodeNotAllowed:                   http.StatusMethodNotAllowed,
	payment.CodeIdempotencyConflict:          http.StatusConflict,
	payment.CodeWebhookURLExists:             http.StatusConflict,
	payment.CodeBodyTooLarge:                 http.StatusRequestEntityTooLarge,
	payment.CodeTooManyRequests:              http.StatusTooManyRequests,
	payment.CodeInvalidCredentials:           http.StatusUnauthorized,
	payment.CodeIncorrectPassword:            http.StatusBadRequest,
	payment.CodeExpiredLoginToken:            http.StatusUnauthorized,
	payment.CodeInternal:                     http.StatusInternalServerError,
	payment.CodeServiceUnavailable:           http.StatusServiceUnavailable,
}

type wireFieldError struct {
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
}

type wireError struct {
	Status string           `json:"status"`
	Code   payment.Code     `json:"code"`
	Errors []wireFieldError `json:"errors"`
}

// writeError answers with the error envelope. Errors that are not
// *payment.Error are internal: they are logged with the request id and
// answered without detail.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var pe *payment.Error
	if !errors.As(err, &pe) && clientGone(r, err) {
		// The client hung up, say during a long poll it stopped waiting
		// for: nothing went wrong here and nobody reads the answer. The
		// request line records 499, nginx's "client closed request".
		s.log.LogAttrs(r.Context(), slog.LevelDebug, "client gone",
			slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		w.WriteHeader(statusClientClosedRequest)
		return
	}
	if pe == nil {
		s.log.LogAttrs(r.Context(), slog.LevelError, "internal error",
			slog.String("request_id", requestID(r.Context())), slog.String("error", err.Error()))
		pe = payment.Errorf(payment.CodeInternal, "")
	}
	status, ok := statusByCode[pe.Code]
	if !ok {
		s.log.LogAttrs(r.Context(), slog.LevelError, "error code without a status",
			slog.String("request_id", requestID(r.Context())), slog.String("code", string(pe.Code)))
		status = http.StatusInternalServerError
	}
	body := wireError{Status: "error", Code: pe.Code, Errors: []wireFieldError{}}
	for _, f := range pe.Fields {
		body.Errors = append(body.Errors, wireFieldError{Field: f.Field, Reason: f.Reason})
	}
	s.writeJSON(w, r, status, body)
}

// statusClientClosedRequest is what the request log says of a request whose
// client went away before the answer (nginx's 499).
const statusClientClosedRequest = 499

// clientGone reports whether err is only the request's context ending: the
// client closed the connection (or the request's deadline passed).
func clientGone(r *http.Request, err error) bool {
	ctxErr := r.Context().Err()
	return ctxErr != nil && errors.Is(err, ctxErr)
}
