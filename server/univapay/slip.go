package univapay

import (
	"encoding/json"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// KonbiniData is a konbini token's data. The PHP SDK requires
// phone_number, convenience_store and a non-null expiration_period, which
// every SDK reads as UnivaPay writes it, in hours (PT720H).
type KonbiniData struct {
	CustomerName        string  `json:"customer_name"`
	ConvenienceStore    string  `json:"convenience_store"`
	ExpirationPeriod    string  `json:"expiration_period"`
	ExpirationTimeShift *string `json:"expiration_time_shift"`
	PhoneNumber         *Phone  `json:"phone_number"`
}

// BankTransferData is a bank-transfer token's data: its bank, its
// virtual account (the Node SDK's fields, account_id among them) and its
// payment period.
type BankTransferData struct {
	Brand               string  `json:"brand"`
	BankCode            string  `json:"bank_code"`
	BankName            string  `json:"bank_name"`
	BranchCode          *string `json:"branch_code"`
	BranchName          *string `json:"branch_name"`
	AccountNumber       *string `json:"account_number"`
	AccountHolderName   *string `json:"account_holder_name"`
	AccountID           *string `json:"account_id"`
	ExpirationPeriod    string  `json:"expiration_period"`
	ExpirationTimeShift *string `json:"expiration_time_shift"`
}

func konbiniDataOf(d payment.TokenData) KonbiniData {
	w := KonbiniData{
		CustomerName: d.CustomerName, ConvenienceStore: d.ConvenienceStore,
		ExpirationPeriod: payment.FormatPaymentPeriod(d.ExpirationPeriod), ExpirationTimeShift: optionalString(d.ExpirationTimeShift),
	}
	if d.PhoneNumber != nil {
		w.PhoneNumber = &Phone{CountryCode: d.PhoneNumber.CountryCode, LocalNumber: d.PhoneNumber.LocalNumber}
	}
	return w
}

func bankTransferDataOf(d payment.TokenData) BankTransferData {
	w := BankTransferData{
		Brand: d.Brand, ExpirationPeriod: payment.FormatPaymentPeriod(d.ExpirationPeriod),
		ExpirationTimeShift: optionalString(d.ExpirationTimeShift),
	}
	if va := d.VirtualAccount; va != nil {
		w.BankCode, w.BankName = va.BankCode, va.BankName
		w.BranchCode, w.BranchName = optionalString(va.BranchCode), optionalString(va.BranchName)
		w.AccountNumber, w.AccountHolderName = optionalString(va.AccountNumber), optionalString(va.AccountHolderName)
		w.AccountID = optionalString(va.AccountID)
	}
	return w
}

// Expiry is a konbini or bank-transfer charge's payment deadline
// (GET …/charges/{id}/expiry/latest, the Node SDK's ChargeExpiry).
type Expiry struct {
	ID             uuid.UUID `json:"id"`
	ChargeID       uuid.UUID `json:"charge_id"`
	StoreID        uuid.UUID `json:"store_id"`
	ExpirationDate Time      `json:"expiration_date"`
	ExtensionCount int       `json:"extension_count"`
	CreatedOn      Time      `json:"created_on"`
	UpdatedOn      Time      `json:"updated_on"`
}

// ExpiryOf shows a payment deadline.
func ExpiryOf(e *payment.Expiry) Expiry {
	return Expiry{
		ID: e.ID, ChargeID: e.ChargeID, StoreID: e.StoreID, ExpirationDate: Time(e.ExpirationDate),
		ExtensionCount: e.ExtensionCount, CreatedOn: Time(e.CreatedOn), UpdatedOn: Time(e.UpdatedOn),
	}
}

// TransferLedgerEntry is a line of a bank transfer's ledger (the
// OpenAPI document's BankTransferLedger), with the charge, the deposits'
// total and the payment status after it besides.
type TransferLedgerEntry struct {
	ID                           uuid.UUID    `json:"id"`
	ChargeID                     uuid.UUID    `json:"charge_id"`
	BankLedgerType               string       `json:"bank_ledger_type"`
	Amount                       int64        `json:"amount"`
	AmountFormatted              json.Number  `json:"amount_formatted"`
	Balance                      int64        `json:"balance"`
	Deposited                    int64        `json:"deposited"`
	Currency                     string       `json:"currency"`
	PaymentStatus                string       `json:"payment_status"`
	VirtualBankAccountHolderName *string      `json:"virtual_bank_account_holder_name"`
	VirtualBankAccountNumber     *string      `json:"virtual_bank_account_number"`
	VirtualAccountID             *string      `json:"virtual_account_id"`
	TransactionDate              string       `json:"transaction_date"`
	TransactionTimestamp         Time         `json:"transaction_timestamp"`
	Mode                         payment.Mode `json:"mode"`
	CreatedOn                    Time         `json:"created_on"`
}

// japan is where the bank's transaction dates are reckoned: a deposit at
// 23:30 UTC is booked on the next day in Tokyo.
var japan = time.FixedZone("JST", 9*60*60)

// TransferLedgerEntryOf shows a ledger line; va is the charge's account.
func TransferLedgerEntryOf(e *payment.TransferEntry, va *payment.VirtualAccount) TransferLedgerEntry {
	w := TransferLedgerEntry{
		ID: e.ID, ChargeID: e.ChargeID, BankLedgerType: string(e.Kind), Amount: e.Amount,
		AmountFormatted: formatted(e.Amount, e.Currency), Balance: e.Balance, Deposited: e.Deposited,
		Currency: e.Currency, PaymentStatus: string(e.PaymentStatus), VirtualAccountID: optionalString(e.VirtualAccountID),
		TransactionDate: e.CreatedOn.In(japan).Format(time.DateOnly), TransactionTimestamp: Time(e.CreatedOn),
		Mode: e.Mode, CreatedOn: Time(e.CreatedOn),
	}
	if va != nil {
		w.VirtualBankAccountHolderName = optionalString(va.AccountHolderName)
		w.VirtualBankAccountNumber = optionalString(va.AccountNumber)
	}
	return w
}

// TransferStatus is a bank_transfer_status_updated event's data (the
// OpenAPI document's BankTransferStatusData).
type TransferStatus struct {
	ID                  uuid.UUID        `json:"id"`
	ChargeID            uuid.UUID        `json:"charge_id"`
	StoreID             uuid.UUID        `json:"store_id"`
	PaymentStatus       string           `json:"payment_status"`
	LatestDepositDate   Time             `json:"latest_deposit_date"`
	LatestDepositAmount int64            `json:"latest_deposit_amount"`
	Balance             int64            `json:"balance"`
	Deposited           int64            `json:"deposited"`
	Currency            string           `json:"currency"`
	Amount              int64            `json:"amount"`
	AmountDifference    int64            `json:"amount_difference"`
	TokenMetadata       payment.Metadata `json:"token_metadata"`
	ChargeMetadata      payment.Metadata `json:"charge_metadata"`
	Mode                payment.Mode     `json:"mode"`
	CreatedOn           Time             `json:"created_on"`
	UpdatedOn           Time             `json:"updated_on"`
}

// TransferStatusOf shows a transfer's status.
func TransferStatusOf(s *payment.TransferStatus) TransferStatus {
	return TransferStatus{
		ID: s.ID(), ChargeID: s.ChargeID, StoreID: s.StoreID, PaymentStatus: string(s.PaymentStatus),
		LatestDepositDate: Time(s.UpdatedOn), LatestDepositAmount: s.LatestDepositAmount, Balance: s.Balance,
		Deposited: s.Deposited, Currency: s.Currency, Amount: s.Amount, AmountDifference: s.AmountDifference(),
		TokenMetadata: metadata(s.TokenMetadata), ChargeMetadata: metadata(s.ChargeMetadata), Mode: s.Mode,
		CreatedOn: Time(s.CreatedOn), UpdatedOn: Time(s.UpdatedOn),
	}
}
