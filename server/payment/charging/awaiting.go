package charging

import (
	"context"

	"github.com/google/uuid"

	"github.com/kessai/kessai/server/payment"
)

// What awaiting means, as the API shows it: a charge that awaits its
// shopper answers with where the shopper goes (its issuer token) or with
// the QR code the merchant shows, as its payment method says
// (methodTraits.awaits); a card's challenge has its own route
// (ChargeThreeDSIssuerToken).

// awaitingApproval returns the approval a resource waits on, or the error
// the reference gives when there is none yet (ISSUER_TOKEN_EMPTY) or no
// longer (INVALID_CHARGE_STATUS). Which kind it is follows from the
// resource's payment type, which the callers have checked: a card's are
// challenges, a wallet's payments.
func awaitingApproval(ctx context.Context, tx payment.Tx, id uuid.UUID, waiting bool) (*payment.Approval, error) {
	if !waiting {
		return nil, payment.Invalid("status", "INVALID_CHARGE_STATUS")
	}
	ap, err := tx.ApprovalFor(ctx, id)
	if payment.IsNotFound(err) || err == nil && ap.Status != payment.ApprovalAwaiting {
		return nil, payment.Invalid("status", "ISSUER_TOKEN_EMPTY")
	}
	return ap, err
}

// ChargeIssuerToken returns where the shopper of a charge that awaits
// them goes (GET …/charges/{id}/issuer_token), for a payment method whose
// shopper is sent there (an online wallet's: its page's URL to open,
// http_get, http_get_mobile and web, or to post the payload to,
// http_post, or for an app, sdk and app, the opaque token the wallet's
// SDK takes, which the sandbox's page also takes in place of its key).
func (s *Service) ChargeIssuerToken(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.IssuerToken, error) {
	var it *payment.IssuerToken
	err := s.db.View(ctx, func(tx payment.Tx) error {
		ch, m, err := s.awaitedCharge(ctx, tx, c, storeID, id, awaitsIssuerToken, "NOT_ONLINE_CHARGE")
		if err != nil {
			return err
		}
		if ch.Status == payment.ChargePending {
			return payment.Invalid("status", "ISSUER_TOKEN_EMPTY")
		}
		ap, err := awaitingApproval(ctx, tx, ch.ID, ch.Status == payment.ChargeAwaiting)
		if err != nil {
			return err
		}
		it = m.issuerToken(s.publicOrigin, ch, ap)
		return nil
	})
	return it, err
}

// ChargeQR returns the QR code of a charge whose payment method has the
// merchant show one (GET …/charges/{id}/qr).
func (s *Service) ChargeQR(ctx context.Context, c *payment.Caller, storeID, id uuid.UUID) (*payment.ChargeQR, error) {
	var qr *payment.ChargeQR
	err := s.db.View(ctx, func(tx payment.Tx) error {
		ch, m, err := s.awaitedCharge(ctx, tx, c, storeID, id, awaitsMerchantQR, "NOT_QR_CHARGE")
		if err != nil {
			return err
		}
		if ch.Status == payment.ChargePending {
			qr = &payment.ChargeQR{}
			return nil
		}
		ap, err := awaitingApproval(ctx, tx, ch.ID, ch.Status == payment.ChargeAwaiting)
		if err != nil {
			return err
		}
		qr = &payment.ChargeQR{Ready: true, ImageURL: m.qrImage(s.publicOrigin, ap)}
		return nil
	})
	return qr, err
}

// awaitedCharge reads a charge for one of the routes that say how its
// shopper is reached (issuer_token, qr, three_ds/issuer_token): one the
// caller may see and may act on for its shopper, whose payment method
// reaches its shopper the way the route does; wrongCode is the route's
// error for a charge of another method.
func (s *Service) awaitedCharge(ctx context.Context, tx payment.Tx, c *payment.Caller, storeID, id uuid.UUID, how awaitKind, wrongCode string) (*payment.Charge, paymentMethod, error) {
	ch, err := s.visibleCharge(ctx, tx, c, storeID, id)
	if err != nil {
		return nil, nil, err
	}
	if err := s.chargeApprovalCaller(c, ch); err != nil {
		return nil, nil, err
	}
	m, err := methodOf(ch.PaymentType)
	if err != nil {
		return nil, nil, err
	}
	if m.traits().awaits != how {
		return nil, nil, payment.Invalid("transaction_token_id", wrongCode)
	}
	return ch, m, nil
}
