package payment

import (
	"errors"
	"strings"
	"time"
)

// Code is a machine-readable error code as the UnivaPay wire format spells
// it. The HTTP API maps each to a status in one table.
type Code string

// The error codes Kessai answers with. Their spelling follows the UnivaPay
// API so that SDKs recognise them.
const (
	CodeValidation          Code = "VALIDATION_ERROR"
	CodeNotFound            Code = "NOT_FOUND"
	CodeNotAllowed          Code = "NOT_ALLOWED"
	CodeBodyTooLarge        Code = "REQUEST_BODY_TOO_LARGE"
	CodeAuthHeaderMissing   Code = "AUTH_HEADER_MISSING"
	CodeInvalidAppToken     Code = "INVALID_APP_TOKEN"
	CodeInvalidDomain       Code = "INVALID_DOMAIN"
	CodeInvalidPermissions  Code = "INVALID_PERMISSIONS"
	CodeResourceLimit       Code = "RESOURCE_LIMIT_REACHED"
	CodeTooManyRequests     Code = "TOO_MANY_REQUESTS"
	CodeInternal            Code = "INTERNAL_SERVER_ERROR"
	CodeServiceUnavailable  Code = "SERVICE_UNAVAILABLE_TRY_AGAIN"
	CodeIdempotencyConflict Code = "IDEMPOTENCY_KEY_CONFLICT"
	CodeInvalidCredentials  Code = "INVALID_CREDENTIALS"
	CodeIncorrectPassword   Code = "INCORRECT_PASSWORD"
	CodeExpiredLoginToken   Code = "EXPIRED_LOGIN_TOKEN"

	CodeDirectCardTokenDisabled      Code = "DIRECT_CARD_TOKEN_CREATION_DISABLED"
	CodeNoTestCardInLiveMode         Code = "NO_TEST_CARD_IN_LIVE_MODE"
	CodeNoGatewaysAvailable          Code = "NO_GATEWAYS_AVAILABLE"
	CodeTransactionAlreadyDone       Code = "TRANSACTION_ALREADY_PROCESSED"
	CodeNotOneTimeToken              Code = "NOT_ONE_TIME_TOKEN"
	CodeTokenForWrongStore           Code = "TOKEN_FOR_WRONG_STORE"
	CodeProcessingModeMismatch       Code = "PROCESSING_MODE_MISMATCH"
	CodeTokenExpired                 Code = "TRANSACTION_TOKEN_EXPIRED"
	CodeChargeAmountTooLow           Code = "CHARGE_AMOUNT_TOO_LOW"
	CodeChargeAmountTooHigh          Code = "CHARGE_AMOUNT_TOO_HIGH"
	CodeAlreadyCaptured              Code = "ALREADY_CAPTURED"
	CodeCaptureAmountTooLarge        Code = "CAPTURE_AMOUNT_TOO_LARGE"
	CodeRefundExceedsCharge          Code = "REFUND_EXCEEDS_CHARGE_AMOUNT"
	CodeCannotRefundUnsuccessful     Code = "CANNOT_REFUND_UNSUCCESSFUL_CHARGE"
	CodeCurrencyMustMatchCharge      Code = "CURRENCY_MUST_MATCH_CHARGE"
	CodeCancelNotAllowed             Code = "CANCEL_NOT_ALLOWED"
	CodeCardBrandNotSupported        Code = "CARD_BRAND_NOT_SUPPORTED"
	CodeRecurringTokenDisabled       Code = "RECURRING_TOKEN_DISABLED"
	CodeRecurringUsageLimit          Code = "RECURRING_USAGE_LIMIT_REQUIRED"
	CodeCVVAuthorizationNotCompleted Code = "CVV_AUTHORIZATION_NOT_COMPLETED"
	CodeWebhookURLExists             Code = "WEBHOOK_URL_EXISTS"
	CodeNotSubscriptionToken         Code = "NOT_SUBSCRIPTION_TOKEN"
	CodeCannotChangeCanceled         Code = "CANNOT_CHANGE_CANCELED_SUBSCRIPTION"
	CodeSubscriptionEnded            Code = "SUBSCRIPTION_ALREADY_ENDED"
	CodeInstallmentsNotEnabled       Code = "INSTALLMENTS_NOT_ENABLED"
	CodeInvalidTokenType             Code = "INVALID_TOKEN_TYPE"
	CodeNonSubscriptionPayment       Code = "NON_SUBSCRIPTION_PAYMENT"
	CodeConvenienceDisabled          Code = "CONVENIENCE_PROCESSING_DISABLED"
	CodePaymentTypeNotAllowed        Code = "PAYMENT_TYPE_NOT_ALLOWED"
	CodeRefundNotAllowed             Code = "REFUND_NOT_ALLOWED"
	CodeCurrencyNotSupported         Code = "CURRENCY_NOT_SUPPORTED"
	CodeTestModeOnly                 Code = "TEST_MODE_ONLY"
)

// Reasons name what is wrong with one field.
const (
	ReasonRequired      = "REQUIRED_VALUE"
	ReasonInvalidFormat = "INVALID_FORMAT"
	ReasonInvalidUUID   = "INVALID_UUID"
	ReasonInvalidLength = "INVALID_FORMAT_LENGTH"
	ReasonInvalidDomain = "INVALID_FORMAT_DOMAIN"
	ReasonInvalidType   = "INVALID_FORMAT_OBJECT"
	ReasonNumberMin     = "NUMBER_MIN"
	ReasonNumberMax     = "NUMBER_MAX"
	// ReasonForbiddenParameter: the caller may not send this value (a
	// browser, what needs the secret).
	ReasonForbiddenParameter = "FORBIDDEN_PARAMETER"
)

// FieldError names one field and what is wrong with it.
type FieldError struct {
	Field  string
	Reason string
}

// Error is an error a client may see: a code, the fields at fault, and a
// message that is safe to log (never card data). Anything that is not an
// *Error reaching the API is answered as INTERNAL_SERVER_ERROR.
type Error struct {
	Code    Code
	Fields  []FieldError
	Message string
	// RetryAfter is, for TOO_MANY_REQUESTS and SERVICE_UNAVAILABLE_TRY_AGAIN,
	// how long to wait (zero: not said).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(string(e.Code))
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	for _, f := range e.Fields {
		b.WriteString(" [")
		b.WriteString(f.Field)
		b.WriteString(" ")
		b.WriteString(f.Reason)
		b.WriteString("]")
	}
	return b.String()
}

// Errorf returns an *Error with a code and a message.
func Errorf(code Code, message string) *Error {
	return &Error{Code: code, Message: message}
}

// Invalid returns a VALIDATION_ERROR naming one field.
func Invalid(field, reason string) *Error {
	return &Error{Code: CodeValidation, Fields: []FieldError{{Field: field, Reason: reason}}}
}

// NotFound is the answer for anything missing or belonging to someone else:
// another tenant's object must be indistinguishable from no object.
func NotFound(what string) *Error {
	return &Error{Code: CodeNotFound, Message: what + " not found"}
}

// ErrorCode returns err's code, or INTERNAL_SERVER_ERROR for an error that
// is not an *Error.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return CodeInternal
}

// IsNotFound reports whether err means "no such object".
func IsNotFound(err error) bool { return ErrorCode(err) == CodeNotFound }

// Validation collects field errors so that a request with several mistakes
// is told about all of them at once.
type Validation struct {
	fields []FieldError
}

// Add records a problem with a field.
func (v *Validation) Add(field, reason string) {
	v.fields = append(v.fields, FieldError{Field: field, Reason: reason})
}

// Err returns the collected problems as a VALIDATION_ERROR, or nil.
func (v *Validation) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &Error{Code: CodeValidation, Fields: v.fields}
}
