package payment

import (
	"context"

	"github.com/google/uuid"
)

// Sealed is encrypted card data and the id of the key that sealed it, so
// keys can rotate: new data uses the current key, old data stays readable.
type Sealed struct {
	KeyID string
	Data  []byte
}

// CardVault encrypts card numbers and CVCs at rest. The associated data
// binds a ciphertext to its object, so that one token's sealed number cannot
// be copied onto another.
type CardVault interface {
	Seal(plaintext, associated []byte) (Sealed, error)
	Open(s Sealed, associated []byte) ([]byte, error)
}

// CardDetails is a card as the processor needs it. It only exists in memory
// between the vault and the processor call.
type CardDetails struct {
	Number     string
	CVC        string // empty once erased after the first authorisation
	ExpMonth   int
	ExpYear    int
	Cardholder string
}

// AuthorizeRequest asks the acquirer to authorise (and maybe capture) an
// amount on a card. ChargeID makes the call idempotent at the acquirer: a
// retry after a crash gets the same answer, never a second authorisation.
type AuthorizeRequest struct {
	ChargeID uuid.UUID
	Mode     Mode
	Card     CardDetails
	Email    string
	Amount   int64
	Currency string
	Capture  bool
	// ThreeDS is the 3-D Secure outcome the authorisation carries: "Y"
	// (authenticated), "A" (attempted; an external MPI's), or "" (none).
	ThreeDS string
}

// PaymentError is the acquirer's reason for not completing an operation
// (UnivaPay's payment error): a numeric code and its name.
type PaymentError struct {
	Code    int
	Message string
	Detail  string
}

// Payment error codes Kessai produces (UnivaPay's wire format).
const (
	ErrCardRejected        = 306
	ErrProcessingError     = 309
	ErrTooManyCharges      = 311
	ErrChargeExpired       = 313
	ErrRefundFailed        = 329
	ErrConfirmationExpired = 327
	ErrWalletRejected      = 340
	ErrPaymentCanceled     = 345
	ErrCardNotEnrolled     = 356
	ErrThreeDSNotCompleted = 358
	ErrRejectedAfter3DS    = 359
	ErrCancelUnavailable   = 312
	ErrNoGatewaysAvailable = 500
)

// paymentErrorNames are the names the Node SDK gives the codes.
var paymentErrorNames = map[int]string{
	301: "CARD_NUMBER_NOT_VALID", 302: "CARD_EXPIRATION_MONTH_INVALID", 303: "CARD_EXPIRATION_YEAR_INVALID",
	304: "CARD_EXPIRED", 305: "CARD_CVV_INVALID", 306: "CARD_REJECTED", 307: "CARD_INVALID",
	308: "CHARGE_INVALID_DATA", 309: "PROCESSING_ERROR", 310: "INVALID_USER_DATA", 311: "TOO_MANY_CHARGE_REQUESTS",
	312: "CANCEL_UNAVAILABLE", 313: "CHARGE_EXPIRED", 314: "SEIZE_CARD", 315: "CONTACT_BANK",
	316: "LAST_NAME_REQUIRED", 317: "PARTIAL_CAPTURE_NOT_SUPPORTED", 318: "PARTIAL_REFUND_NOT_SUPPORTED",
	319: "FRAUD_SUSPECTED", 320: "BANK_SYSTEM_FAILURE", 321: "DYNAMIC_DESCRIPTOR_NOT_SUPPORTED",
	322: "PAYMENT_CODE_INVALID", 323: "PAYMENT_CODE_EXPIRED", 324: "PAYMENT_CODE_ALREADY_USED",
	325: "PAYMENT_CODE_STILL_IN_USE", 326: "REJECTED_HIGH_RISK", 327: "CONFIRMATION_PERIOD_EXPIRED",
	328: "REVERT_FAILED", 329: "REFUND_FAILED", 330: "PAYMENT_WALLET_INSUFFICIENT_FUNDS",
	331: "INVALID_METADATA_FIELD_VALUE", 332: "CROSS_BORDER_NOT_ACCEPTED_MISSING_ID",
	333: "CROSS_BORDER_NOT_ACCEPTED_MISSING_PHONE_NUMBER", 334: "CROSS_BORDER_NOT_ACCEPTED_UNACCEPTED_PAYMENT_METHOD",
	335: "CROSS_BORDER_NOT_ACCEPTED_MISSING_NAME", 336: "LIMIT_EXCEEDED_FOR_PAYMENT_TYPE",
	337: "LIMIT_EXCEEDED_FOR_MERCHANT", 338: "TRANSACTION_NOT_FOUND", 339: "DUPLICATE_TRANSACTION",
	340: "PAYMENT_WALLET_REJECTED", 341: "INSUFFICIENT_MERCHANT_INFORMATION",
	342: "CROSS_BORDER_NOT_ACCEPTED_UNACCEPTED_CURRENCY", 343: "GATEWAY_SERVER_ERROR",
	344: "PAYMENT_METHOD_TEMPORARILY_UNAVAILABLE", 345: "PAYMENT_CANCELED", 346: "EXCEEDED_PENDING_THRESHOLD",
	351: "DISPUTED_TRANSACTION", 355: "PAYMENT_TYPE_NOT_SUPPORTED", 356: "CARD_NOT_ENROLLED_IN_THREE_DS",
	358: "THREE_DS_COULD_NOT_BE_COMPLETED", 359: "CARD_REJECTED", 363: "IDENTITY_VERIFICATION_INCOMPLETE",
	500: "NO_GATEWAYS_AVAILABLE",
}

// NewPaymentError returns the error for a code with its standard name.
func NewPaymentError(code int, detail string) *PaymentError {
	name, ok := paymentErrorNames[code]
	if !ok {
		name = "PROCESSING_ERROR"
	}
	return &PaymentError{Code: code, Message: name, Detail: detail}
}

// KnownPaymentErrorCode reports whether code is one the SDKs know.
func KnownPaymentErrorCode(code int) bool {
	_, ok := paymentErrorNames[code]
	return ok
}

// ProcessorResult is the outcome of one acquirer operation: nil Error means
// done. An Error with code 309 means the acquirer could not decide (status
// "error"), any other a refusal (status "failed").
type ProcessorResult struct {
	Error     *PaymentError
	Reference string
}

// Processor is an acquirer. The sandbox is one; a real acquirer would be
// another implementation. Every method must be idempotent per operation id.
type Processor interface {
	Authorize(ctx context.Context, req AuthorizeRequest) (ProcessorResult, error)
	Capture(ctx context.Context, chargeID uuid.UUID, card CardDetails, amount int64, currency string) (ProcessorResult, error)
	Refund(ctx context.Context, refundID uuid.UUID, card CardDetails, amount int64, currency string) (ProcessorResult, error)
	Void(ctx context.Context, cancelID uuid.UUID, card CardDetails) (ProcessorResult, error)
	// ThreeDS is what the card's issuer does about 3-D Secure.
	ThreeDS(card CardDetails) ThreeDSProfile
	// IsTestCard reports whether a number is one of the processor's test
	// cards, which live mode refuses.
	IsTestCard(number string) bool
	// SupportsLive reports whether live-mode charges can be processed.
	SupportsLive() bool
}
