package charging

import (
	"context"
	"slices"
	"time"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// bankTransferMethod is a bank transfer (payment_type bank_transfer): the
// token opens a virtual account for its one payment, shown on the token;
// the shopper wires the amount to it before the deadline. Deposits may
// fall short, match or exceed the amount: each is recorded in the
// charge's ledger (GET …/bank_transfer_ledgers) and announced
// (bank_transfer_status_updated), and the store's match-amount rule says
// when they pay the charge (payment.MatchAmount). Deposits that arrive
// after the charge ended are recorded too: the money is there, whatever
// became of the charge.
type bankTransferMethod struct{ slipMethod }

func (bankTransferMethod) paymentType() string { return payment.PaymentTypeBankTransfer }

func (bankTransferMethod) checkToken(v *payment.Validation, p *payment.NewToken, _ time.Time) {
	d := checkSlipToken(v, p, payment.MinTransferPeriod, payment.MaxTransferPeriod, payment.DefaultTransferPeriod)
	if d == nil {
		return
	}
	switch {
	case d.Brand == "":
		v.Add("brand", payment.ReasonRequired)
	case !slices.Contains(payment.BankTransferBrands, d.Brand):
		v.Add("brand", "BRAND_NOT_DEFINED")
	}
}

// sandboxBanks are the banks the sandbox opens virtual accounts at, by
// brand.
var sandboxBanks = map[string]struct{ code, name, branchCode, branchName string }{
	"aozora_bank":     {"0310", "GMOあおぞらネット銀行", "101", "法人営業部"},
	"bank_test_brand": {"9999", "テスト銀行", "001", "本店"},
}

// newToken opens the token's virtual account: an account number of seven
// digits made up at random, held in the store's name.
func (bankTransferMethod) newToken(_ *core, _ *payment.Caller, p *payment.NewToken, tok *payment.TransactionToken) error {
	d := p.Data
	bank := sandboxBanks[d.Brand]
	tok.Data = payment.TokenData{
		Brand: d.Brand, ExpirationPeriod: d.ExpirationPeriod, ExpirationTimeShift: d.ExpirationTimeShift,
		VirtualAccount: &payment.VirtualAccount{
			AccountID: payment.NewID().String(), BankCode: bank.code, BankName: bank.name,
			BranchCode: bank.branchCode, BranchName: bank.branchName, AccountType: "ordinary",
			AccountNumber: randomDigits(7),
		},
	}
	return nil
}

// admitToken: the store takes bank transfers unless it turned them off,
// and the test bank's in test mode only;
// the account is held in the store's name (in full-width katakana at a
// real bank; the sandbox keeps the name as it is).
func (bankTransferMethod) admitToken(_ context.Context, _ *core, _ *outbox.Tx, _ *payment.Caller, st *payment.Store, tok *payment.TransactionToken) error {
	if st.Settings.BankTransferOff {
		return payment.Errorf(payment.CodePaymentTypeNotAllowed, "this store does not take bank transfers")
	}
	if tok.Mode == payment.ModeLive && tok.Data.Brand == payment.TestBank {
		return payment.Errorf(payment.CodeNoTestCardInLiveMode, "the sandbox's test bank takes no live transfers")
	}
	tok.Data.VirtualAccount.AccountHolderName = st.Name
	return nil
}

// authorize opens the transfer: the charge awaits its shopper's deposits
// to the token's account until its deadline.
func (bankTransferMethod) authorize(ctx context.Context, s *core, w payment.Work, _ *payment.Charge, tok *payment.TransactionToken, _ payment.CardDetails) error {
	return awaitSlip(ctx, s, w, tok, payment.ApprovalBankTransfer, func() payment.PaymentSlip {
		return payment.PaymentSlip{VirtualAccount: tok.Data.VirtualAccount}
	})
}

func (bankTransferMethod) approvalKind() payment.ApprovalKind { return payment.ApprovalBankTransfer }

// approvalOutcome: the page's only action besides deposits (deposit) is
// "Let the deadline pass", in test mode.
func (bankTransferMethod) approvalOutcome(ap *payment.Approval, action payment.ApprovalAction, _ string) (payment.ApprovalStatus, error) {
	if err := sandboxOnly(ap); err != nil {
		return "", err
	}
	if action == payment.ActionExpire {
		return payment.ApprovalExpired, nil
	}
	return "", payment.Invalid("action", payment.ReasonInvalidFormat)
}

// settleCharge: paid, the charge succeeds with what was deposited by
// then as its charged amount (an excess included, so that it can be
// refunded); past its deadline it fails with 327.
func (bankTransferMethod) settleCharge(ch *payment.Charge, ap *payment.Approval, outcome payment.ApprovalStatus) bool {
	settleSlip(ch, ap.Slip.Deposited, outcome)
	return false
}

// checkRefund: what a bank transfer paid of the charge is not refunded;
// an excess over the amount asked for is, back to the shopper's bank.
func (bankTransferMethod) checkRefund(ch *payment.Charge, amount, refunded int64) error {
	excess := *ch.ChargedAmount - ch.RequestedAmount
	if amount > excess-refunded {
		return payment.Errorf(payment.CodeRefundNotAllowed, "only the excess of a bank transfer over its amount can be refunded")
	}
	return nil
}

// A depositTaker is a payment method whose shopper sends money outside
// any page, that the gateway records as it arrives: a bank transfer.
type depositTaker interface {
	deposit(ctx context.Context, s *core, tx *outbox.Tx, ap *payment.Approval, ch *payment.Charge, amount int64, now time.Time) error
}

// deposit records amount arriving on the virtual account of the charge
// ch, whose approval is ap, in the caller's transaction: a line of the
// ledger, the event, and, when the charge still awaits its shopper and
// the store's rule says the deposits now pay it, the charge's success
// with the payment out of the balance.
func (bankTransferMethod) deposit(ctx context.Context, s *core, tx *outbox.Tx, ap *payment.Approval, ch *payment.Charge, amount int64, now time.Time) error {
	prev, err := tx.LatestTransferEntry(ctx, ch.ID)
	if err != nil && !payment.IsNotFound(err) {
		return err
	}
	if prev == nil {
		prev = &payment.TransferEntry{}
	}
	entry := &payment.TransferEntry{
		ID: payment.NewID(), ChargeID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, Mode: ch.Mode,
		Kind: payment.TransferDeposit, Amount: amount, Balance: prev.Balance + amount,
		Deposited: prev.Deposited + amount, Currency: ch.Currency, CreatedOn: now,
	}
	if va := ap.Slip.VirtualAccount; va != nil {
		entry.VirtualAccountID = va.AccountID
	}
	entry.PaymentStatus = payment.TransferStatusOf(entry.Deposited, ch.RequestedAmount)
	if err := tx.AddTransferEntry(ctx, entry); err != nil {
		return err
	}
	ap.Slip.Deposited, ap.UpdatedOn = entry.Deposited, now
	status := &payment.TransferStatus{
		ChargeID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, Mode: ch.Mode,
		PaymentStatus: entry.PaymentStatus, LatestDepositAmount: amount, Balance: entry.Balance,
		Deposited: entry.Deposited, Amount: ch.RequestedAmount, Currency: ch.Currency,
		ChargeMetadata: ch.Metadata, CreatedOn: ap.CreatedOn, UpdatedOn: now,
	}
	st, err := tx.Store(ctx, ch.StoreID)
	if err != nil {
		return err
	}
	pays := ap.Status == payment.ApprovalAwaiting && ch.Status == payment.ChargeAwaiting &&
		st.Settings.TransferMatch().Pays(entry.Deposited, ch.RequestedAmount)
	if pays {
		paid := &payment.TransferEntry{
			ID: payment.NewID(), ChargeID: ch.ID, StoreID: ch.StoreID, MerchantID: ch.MerchantID, Mode: ch.Mode,
			Kind: payment.TransferPayment, Amount: entry.Balance, Balance: 0, Deposited: entry.Deposited,
			Currency: ch.Currency, PaymentStatus: entry.PaymentStatus, VirtualAccountID: entry.VirtualAccountID,
			CreatedOn: now,
		}
		if err := tx.AddTransferEntry(ctx, paid); err != nil {
			return err
		}
		status.Balance = 0
	}
	tok, err := tx.Token(ctx, ch.TokenID)
	if err != nil {
		return err
	}
	status.TokenMetadata = tok.Metadata
	if err := tx.Announce(ctx, payment.EventBankTransferStatusUpdated, status); err != nil {
		return err
	}
	if pays {
		return s.settleApproval(ctx, tx, ap, payment.ApprovalSuccessful, now)
	}
	if err := tx.UpdateApproval(ctx, ap); err != nil {
		return err
	}
	tx.WakePolls(ch.ID)
	return nil
}
