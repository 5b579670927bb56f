package sqlstore

import (
	"strings"

	"github.com/kessai/kessai/server/payment"
)

// The list filters that look into more than one column: token search, the
// card and phone of a charge's token, the transaction history's search and
// metadata. Letters are folded as the domain folds them, ASCII only
// (payment.TransactionToken.MatchesSearch), which each engine spells its
// own way (Dialect.ContainsFold, Dialect.EqualFold).

// tokenSearch keeps the tokens that payment.TransactionToken.MatchesSearch
// the term: its e-mail or cardholder contains it, or it is the last four.
func tokenSearch(c *conditions, q string) {
	c.add("(last_four = ? OR "+c.d.ContainsFold("email")+" OR "+c.d.ContainsFold("cardholder")+")", q, q, q)
}

// phoneDigits is a token's billing phone number, country code and local
// number, with the separators the domain allows in a local number removed.
func phoneDigits(d Dialect) string {
	return `replace(replace(replace(replace(replace(
	` + d.JSONText("billing", "phone_number", "local_number") + `, ' ', ''), '-', ''), '(', ''), ')', ''), '+', '')`
}

// chargeCard keeps the charges whose token has the card and phone the
// filter names (payment.ChargeFilter.MatchesToken).
func chargeCard(c *conditions, f payment.ChargeFilter) {
	tok := conditions{d: c.d}
	if f.Cardholder != "" {
		tok.add(c.d.EqualFold("cardholder"), f.Cardholder)
	}
	if f.ExpMonth != nil {
		tok.add("exp_month = ?", *f.ExpMonth)
	}
	if f.ExpYear != nil {
		tok.add("exp_year = ?", *f.ExpYear)
	}
	if f.CardBIN != "" {
		tok.add("card_bin = ?", f.CardBIN)
	}
	if f.Phone != "" {
		digits := phoneDigits(c.d)
		tok.add("("+digits+" = ? OR "+c.d.JSONText("billing", "phone_number", "country_code")+" || "+digits+" = ?)",
			f.Phone, f.Phone)
	}
	if len(tok.parts) > 0 {
		c.add("token_id IN (SELECT id FROM tokens WHERE "+strings.Join(tok.parts, " AND ")+")", tok.args...)
	}
}

// ledgerSearch keeps the history lines payment.LedgerFilter.Search finds:
// the line's resource or charge is the term, or its charge's e-mail
// contains it, or its charge's card ends in it.
func ledgerSearch(c *conditions, q string) {
	c.add("("+c.d.IDText("id")+" = ? OR "+c.d.IDText("charge_id")+" = ? OR charge_id IN (SELECT id FROM charges WHERE last_four = ? OR "+
		c.d.ContainsFold("email")+"))", q, q, q, q)
}

// subscriptionSearch keeps the subscriptions payment.SubscriptionFilter's
// Search finds: the term is the subscription's id or its token's, its
// e-mail contains it (ASCII letters in any case, no character a
// wildcard), it is the card's last four, or it is the text of one of its
// metadata values (as metadataMatches compares one).
func subscriptionSearch(c *conditions, q string) {
	c.add("("+c.d.IDText("id")+" = ? OR "+c.d.IDText("token_id")+" = ? OR "+c.d.ContainsFold("email")+" OR last_four = ? OR "+
		c.d.MetadataValueIs()+")", q, q, q, q, q)
}

// metadataMatches keeps the rows whose metadata column holds key with a
// value whose text is value (payment.Metadata.Matches: `order_id: 123`
// finds the string "123" and the number 123).
func metadataMatches(c *conditions, key, value string) {
	c.add(c.d.MetadataMatches(), key, key, key, key, value)
}
