package payment

import (
	"time"

	"github.com/google/uuid"
)

// PaymentTypeBankTransfer is the payment type of bank transfers: the
// shopper wires the amount to a virtual account made for the payment,
// before its deadline; deposits may fall short, match or exceed it.
const PaymentTypeBankTransfer = "bank_transfer"

// BankTransferBrands are the banks that open virtual accounts: Aozora
// Bank, and the sandbox's test bank (the Node SDK's BankTransferBrand).
var BankTransferBrands = []string{"aozora_bank", TestBank}

// TestBank is the sandbox's own bank, for test mode only.
const TestBank = "bank_test_brand"

// VirtualAccount is the account a bank-transfer token's shopper pays
// into: opened for that token alone, so that every deposit to it is
// that payment's.
type VirtualAccount struct {
	// AccountID is the bank's id of the account (Node's account_id).
	AccountID         string `json:"account_id"`
	BankCode          string `json:"bank_code"`
	BankName          string `json:"bank_name"`
	BranchCode        string `json:"branch_code"`
	BranchName        string `json:"branch_name"`
	AccountType       string `json:"account_type"`
	AccountNumber     string `json:"account_number"`
	AccountHolderName string `json:"account_holder_name"`
}

// TransferPaymentStatus is how a bank transfer's deposits compare with its
// charge's amount (UnivaPay's BankTransferPaymentStatus).
type TransferPaymentStatus string

// The transfer payment statuses: nothing deposited; less than the amount;
// the amount; more than it.
const (
	TransferUnpaid       TransferPaymentStatus = "unpaid"
	TransferInsufficient TransferPaymentStatus = "insufficient"
	TransferExact        TransferPaymentStatus = "exact"
	TransferExceeded     TransferPaymentStatus = "exceeded"
)

// TransferStatusOf is the payment status of deposits totalling deposited
// against a charge of amount.
func TransferStatusOf(deposited, amount int64) TransferPaymentStatus {
	switch {
	case deposited <= 0:
		return TransferUnpaid
	case deposited < amount:
		return TransferInsufficient
	case deposited == amount:
		return TransferExact
	}
	return TransferExceeded
}

// MatchAmount is a store's rule for when a bank transfer's deposits pay
// its charge (UnivaPay's bank-transfer match_amount setting, whose values
// no reference explains; these meanings are Kessai's):
//   - minimum (the default): once they reach the amount, exactly or more;
//   - exact: only when they are exactly the amount: more leaves the
//     charge awaiting, for the merchant to sort out with the shopper;
//   - maximum: at the first deposits of at most the amount: a shopper may
//     pay less, never more;
//   - disabled: at the first deposit, whatever its amount.
//
// The charge's charged amount is what was deposited when it was paid, so
// that an excess can be refunded like any part of a charge.
type MatchAmount string

// The match-amount rules.
const (
	MatchMinimum  MatchAmount = "minimum"
	MatchExact    MatchAmount = "exact"
	MatchMaximum  MatchAmount = "maximum"
	MatchDisabled MatchAmount = "disabled"
)

// Valid reports whether m is one of the rules.
func (m MatchAmount) Valid() bool {
	return m == MatchMinimum || m == MatchExact || m == MatchMaximum || m == MatchDisabled
}

// Pays reports whether deposits totalling deposited pay a charge of
// amount under the rule m ("" is minimum).
func (m MatchAmount) Pays(deposited, amount int64) bool {
	if deposited <= 0 {
		return false
	}
	switch m {
	case MatchExact:
		return deposited == amount
	case MatchMaximum:
		return deposited <= amount
	case MatchDisabled:
		return true
	}
	return deposited >= amount
}

// TransferEntryKind is what a line of a bank transfer's ledger records.
type TransferEntryKind string

// The ledger's lines: money deposited to the virtual account; and the
// payment of the charge out of the balance, when the deposits paid it.
const (
	TransferDeposit TransferEntryKind = "deposit"
	TransferPayment TransferEntryKind = "payment"
)

// TransferEntry is one line of a bank transfer's ledger
// (GET …/charges/{id}/bank_transfer_ledgers): a deposit adds to the
// balance, the payment takes the charged amount out of it. Balance is the
// account's after the line; Deposited the deposits' total so far, which
// PaymentStatus compares with the charge's amount.
type TransferEntry struct {
	ID            uuid.UUID
	ChargeID      uuid.UUID
	StoreID       uuid.UUID
	MerchantID    uuid.UUID
	Mode          Mode
	Kind          TransferEntryKind
	Amount        int64
	Balance       int64
	Deposited     int64
	Currency      string
	PaymentStatus TransferPaymentStatus
	// VirtualAccountID is the account's AccountID.
	VirtualAccountID string
	CreatedOn        time.Time
}

// TransferLedger is a page of a bank transfer's ledger, and the account
// its deposits were made to (nil for a charge of another method).
type TransferLedger struct {
	Page    Page[*TransferEntry]
	Account *VirtualAccount
}

// TransferStatus is what a bank_transfer_status_updated event carries: the
// charge's transfer after a deposit (UnivaPay's BankTransferStatusData).
type TransferStatus struct {
	ChargeID            uuid.UUID
	StoreID             uuid.UUID
	MerchantID          uuid.UUID
	Mode                Mode
	PaymentStatus       TransferPaymentStatus
	LatestDepositAmount int64
	Balance             int64
	Deposited           int64
	Amount              int64
	Currency            string
	TokenMetadata       Metadata
	ChargeMetadata      Metadata
	CreatedOn           time.Time
	UpdatedOn           time.Time
}

// ID is the status's id as its events show it: one per charge, as
// UnivaPay's status record is.
func (s *TransferStatus) ID() uuid.UUID {
	return uuid.NewSHA1(s.ChargeID, []byte("bank_transfer_status"))
}

// EventOwner: a transfer's events are its charge's, so that they are
// listed with the charge's own.
func (s *TransferStatus) EventOwner() (uuid.UUID, uuid.UUID, uuid.UUID, Mode) {
	return s.ChargeID, s.MerchantID, s.StoreID, s.Mode
}

// AmountDifference is the deposits' total less the charge's amount:
// negative while short.
func (s *TransferStatus) AmountDifference() int64 { return s.Deposited - s.Amount }

// Expiry is a konbini or bank-transfer charge's payment deadline
// (GET …/charges/{id}/expiry/latest): the latest of the deadlines it has
// had, one per extension.
type Expiry struct {
	ID             uuid.UUID
	ChargeID       uuid.UUID
	StoreID        uuid.UUID
	ExpirationDate time.Time
	ExtensionCount int
	CreatedOn      time.Time
	UpdatedOn      time.Time
}

// ExpiryExtension asks for a later payment deadline: by a period, or to a
// date; never both.
type ExpiryExtension struct {
	Period *time.Duration
	Date   *time.Time
}

// Expiry extension limits (ours: no reference gives figures): a
// deadline moves at most MaxExpiryExtensions times, each time later by at
// most MaxExpiryExtension, and never past MaxPaymentWindow after the
// charge began to await its shopper.
const (
	MaxExpiryExtensions = 3
	MaxExpiryExtension  = 30 * 24 * time.Hour
	MaxPaymentWindow    = 60 * 24 * time.Hour
)

// The expiry extension errors, the SDKs' names.
const (
	CodeMaxExpiryExtensionExceeded Code = "MAXIMUM_EXPIRY_EXTENSION_EXCEEDED"
	CodePositiveExtensionRequired  Code = "POSITIVE_EXPIRY_EXTENSION_REQUIRED"
	CodeEitherPeriodOrDate         Code = "EITHER_PERIOD_OR_DATE"
	CodeMaximumExtensionsReached   Code = "MAXIMUM_EXTENSIONS_REACHED"
)
