package charging

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/payment/outbox"
)

// The payment deadline of a konbini or bank-transfer charge is its
// approval's ExpiresOn: the gateway ends the approval at that time on its
// own clock (WorkApprovalExpiry), whatever a page shows. The merchant
// reads it (ChargeExpiry) and may move it later (ExtendExpiry).

// deadlineApproval reads, in tx, a charge of a method with a payment
// deadline that the caller sees, and the approval it awaits (NOT_FOUND
// "expiry" while it has none: a charge of another method, or one the
// worker has not yet opened).
func (s *core) deadlineApproval(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID) (*payment.Charge, *payment.Approval, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
	if err != nil {
		return nil, nil, err
	}
	m, err := methodOf(ch.PaymentType)
	if err != nil {
		return nil, nil, err
	}
	if !m.traits().deadline {
		return nil, nil, payment.NotFound("expiry")
	}
	ap, err := tx.ApprovalFor(ctx, ch.ID)
	if payment.IsNotFound(err) {
		return nil, nil, payment.NotFound("expiry")
	}
	return ch, ap, err
}

func expiryOf(ch *payment.Charge, ap *payment.Approval) *payment.Expiry {
	e := &payment.Expiry{
		ID:       uuid.NewSHA1(ch.ID, []byte{'e', 'x', 'p', 'i', 'r', 'y', byte(ap.Slip.Extensions)}),
		ChargeID: ch.ID, StoreID: ch.StoreID, ExpirationDate: ap.ExpiresOn, ExtensionCount: ap.Slip.Extensions,
		CreatedOn: ap.CreatedOn, UpdatedOn: ap.CreatedOn,
	}
	if ap.Slip.ExtendedOn != nil {
		e.CreatedOn, e.UpdatedOn = *ap.Slip.ExtendedOn, *ap.Slip.ExtendedOn
	}
	return e
}

// ChargeExpiry returns a konbini or bank-transfer charge's payment
// deadline as it is now (GET …/charges/{id}/expiry/latest): each
// extension makes a new one, whose id and creation time are its own.
func (s *Service) ChargeExpiry(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.Expiry, error) {
	var e *payment.Expiry
	err := s.db.View(ctx, func(tx payment.Tx) error {
		ch, ap, err := s.deadlineApproval(ctx, tx, c, storeID, id)
		if err == nil {
			e = expiryOf(ch, ap)
		}
		return err
	})
	return e, err
}

// ExtendExpiry moves the payment deadline of a charge that awaits its
// shopper later (POST …/charges/{id}/expiry), by a period or to a date,
// never both (EITHER_PERIOD_OR_DATE). The new deadline must be later than
// the current one (POSITIVE_EXPIRY_EXTENSION_REQUIRED), by at most
// MaxExpiryExtension and at most MaxPaymentWindow after the charge began
// to await its shopper, when its first deadline was set
// (MAXIMUM_EXPIRY_EXTENSION_EXCEEDED): a 30-day konbini payment extended
// by 30 days ends at the window's last instant, and a deadline moves at most
// MaxExpiryExtensions times (MAXIMUM_EXTENSIONS_REACHED). A deadline that
// has passed cannot be extended: the charge has failed, or is about to.
// The charge shows the new deadline as its capture_at (charge_updated).
func (s *Service) ExtendExpiry(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, x payment.ExpiryExtension) (*payment.Expiry, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if (x.Period == nil) == (x.Date == nil) {
		return nil, payment.Errorf(payment.CodeEitherPeriodOrDate, "give either an expiration_period or an expiration_date")
	}
	var e *payment.Expiry
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		ch, ap, err := s.deadlineApproval(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if ch.Status != payment.ChargeAwaiting || ap.Status != payment.ApprovalAwaiting || ap.Expired(now) {
			return payment.Invalid("status", "INVALID_CHARGE_STATUS")
		}
		if ap.Slip.Extensions >= payment.MaxExpiryExtensions {
			return payment.Errorf(payment.CodeMaximumExtensionsReached, "the deadline has been extended as often as it may be")
		}
		until := ap.ExpiresOn
		if x.Period != nil {
			until = until.Add(*x.Period)
		} else {
			until = *x.Date
		}
		switch {
		case !until.After(ap.ExpiresOn):
			return payment.Errorf(payment.CodePositiveExtensionRequired, "the new deadline must be later than the current one")
		case until.Sub(ap.ExpiresOn) > payment.MaxExpiryExtension || until.After(ap.CreatedOn.Add(payment.MaxPaymentWindow)):
			return payment.Errorf(payment.CodeMaxExpiryExtensionExceeded, "the new deadline is further than an extension may move it")
		}
		ap.ExpiresOn, ap.UpdatedOn = until, now
		ap.Slip.Extensions++
		ap.Slip.ExtendedOn = &now
		if err := tx.UpdateApproval(ctx, ap); err != nil {
			return err
		}
		// The expiry item stays due at the old deadline: it then finds
		// the approval not yet expired and queues itself at the new one.
		ch.CaptureAt, ch.UpdatedOn = &until, now
		if err := tx.UpdateCharge(ctx, ch); err != nil {
			return err
		}
		tx.WakePolls(ch.ID)
		e = expiryOf(ch, ap)
		return tx.Announce(ctx, payment.EventChargeUpdated, ch)
	})
	return e, err
}

// TransferLedger lists the lines of a charge's bank-transfer ledger
// (GET …/charges/{id}/bank_transfer_ledgers) as p pages them, with the
// virtual account they were paid into; a charge of another method has
// none. It is the merchant's: the app token's secret is needed.
func (s *Service) TransferLedger(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, p payment.ListParams) (*payment.TransferLedger, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	var l payment.TransferLedger
	err := s.db.View(ctx, func(tx payment.Tx) error {
		ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
		if err != nil {
			return err
		}
		if l.Page, err = tx.ListTransferEntries(ctx, ch.ID, p); err != nil {
			return err
		}
		tok, err := tx.Token(ctx, ch.TokenID)
		if err != nil {
			return err
		}
		l.Account = tok.Data.VirtualAccount
		return nil
	})
	return &l, err
}

// SimulateShopper is the sandbox's test helpers (POST …/charges/{id}/
// test_helpers/{pay,deposit,expire}), which stand for what a shopper does
// away from the gateway, the way Stripe's test helpers simulate incoming
// transfers: a konbini payment made at the counter (pay), money wired to a
// bank transfer's account (deposit, of amount), the deadline passing now
// (expire). Test mode and the app token's secret only. A charge the
// worker has not yet opened is waited for (at most wait). It answers the
// charge as the action left it.
func (s *Service) SimulateShopper(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID, action payment.ApprovalAction, amount int64, wait time.Duration) (*payment.Charge, error) {
	if err := c.RequireSecret(); err != nil {
		return nil, err
	}
	if c.Mode() != payment.ModeTest {
		return nil, payment.Errorf(payment.CodeTestModeOnly, "test helpers act on test-mode charges only")
	}
	if action == payment.ActionDeposit {
		if _, err := payment.CheckAmount(amount, slipCurrency, "amount"); err != nil {
			return nil, err
		}
	}
	// A charge of another method is refused at once, not after waiting
	// for it to leave pending.
	ch, err := s.Charge(ctx, c, storeID, id, 0)
	if err != nil {
		return nil, err
	}
	if m, err := methodOf(ch.PaymentType); err != nil || !m.traits().deadline {
		return nil, payment.Invalid("transaction_token_id", "NOT_KONBINI_OR_BANK_TRANSFER_CHARGE")
	}
	if ch.Status == payment.ChargePending {
		if ch, err = s.Charge(ctx, c, storeID, id, wait); err != nil {
			return nil, err
		}
	}
	if ch.Status == payment.ChargePending {
		return nil, payment.Invalid("status", "ISSUER_TOKEN_EMPTY")
	}
	var settled bool
	err = s.db.Update(ctx, func(tx *outbox.Tx) error {
		settled = false
		ch, ap, err := s.deadlineApproval(ctx, tx, c, storeID, id)
		if payment.IsNotFound(err) {
			return payment.Invalid("transaction_token_id", "NOT_KONBINI_OR_BANK_TRANSFER_CHARGE")
		}
		if err != nil {
			return err
		}
		settled = true
		return s.shopperActs(ctx, tx, ch, ap, action, amount)
	})
	if err != nil {
		return nil, err
	}
	if settled {
		s.db.Changed(id)
		s.db.WakeWorker()
	}
	return s.Charge(ctx, c, storeID, id, 0)
}

// DepositOnApproval is the sandbox instructions page's deposit: money
// wired to the account of the bank transfer whose approval has key.
// Holding the key is the authority, as for the page's other actions; a
// live payment's money comes from a real bank, never from the page
// (TEST_MODE_ONLY).
func (s *Service) DepositOnApproval(ctx context.Context, key string, amount int64) (*payment.ApprovalPage, error) {
	if _, err := payment.CheckAmount(amount, slipCurrency, "amount"); err != nil {
		return nil, err
	}
	var page *payment.ApprovalPage
	err := s.db.Update(ctx, func(tx *outbox.Tx) error {
		var err error
		if page, err = s.approvalPage(ctx, tx, key); err != nil {
			return err
		}
		if page.ResourceType != payment.ResourceCharge {
			return payment.Invalid("action", payment.ReasonInvalidFormat)
		}
		if page.Mode != payment.ModeTest {
			return payment.Errorf(payment.CodeTestModeOnly, "a live payment's deposits come from its bank")
		}
		ch, err := tx.Charge(ctx, page.ResourceID)
		if err != nil {
			return err
		}
		return s.shopperActs(ctx, tx, ch, &page.Approval, payment.ActionDeposit, amount)
	})
	if err != nil {
		return nil, err
	}
	s.db.Changed(page.ResourceID)
	s.db.WakeWorker()
	return page, nil
}

// shopperActs carries out, in tx, what the shopper of ch did away from
// any page: a deposit is recorded whatever became of the charge (after
// the approval has expired, if its time ran out), by a method that takes
// deposits; paying and letting the deadline pass act on an approval that
// still awaits them, as the page's buttons do.
func (s *core) shopperActs(ctx context.Context, tx *outbox.Tx, ch *payment.Charge, ap *payment.Approval, action payment.ApprovalAction, amount int64) error {
	now := s.clock.Now()
	if action != payment.ActionDeposit {
		if ap.Status != payment.ApprovalAwaiting {
			return payment.Invalid("status", "INVALID_CHARGE_STATUS")
		}
		outcome, err := approvalOutcome(ap, action, "", now)
		if err != nil {
			return err
		}
		return s.settleApproval(ctx, tx, ap, outcome, now)
	}
	m, err := methodOf(ch.PaymentType)
	if err != nil {
		return err
	}
	dt, ok := m.(depositTaker)
	if !ok {
		return payment.Invalid("action", payment.ReasonInvalidFormat)
	}
	if ap.Status == payment.ApprovalAwaiting && ap.Expired(now) {
		if err := s.settleApproval(ctx, tx, ap, payment.ApprovalExpired, now); err != nil {
			return err
		}
		if ch, err = tx.Charge(ctx, ch.ID); err != nil {
			return err
		}
	}
	return dt.deposit(ctx, s, tx, ap, ch, amount, now)
}
