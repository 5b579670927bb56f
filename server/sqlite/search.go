package sqlite

import (
	"strings"

	"github.com/kessai/kessai/server/payment"
)

// The list filters that look into more than one column: token search, the
// card and phone of a charge's token, the transaction history's search and
// metadata. SQLite's lower() folds ASCII letters only, which is the
// domain's rule too (payment.TransactionToken.MatchesSearch).

// containsFold is the condition "column contains ?, ASCII letters in any
// case"; instr, unlike LIKE, gives % and _ no meaning.
func containsFold(column string) string {
	return "instr(lower(" + column + "), lower(?)) > 0"
}

// tokenSearch keeps the tokens that payment.TransactionToken.MatchesSearch
// the term: its e-mail or cardholder contains it, or it is the last four.
func tokenSearch(c *conditions, q string) {
	c.add("(last_four = ? OR "+containsFold("email")+" OR "+containsFold("cardholder")+")", q, q, q)
}

// phoneDigits is a token's billing phone number, country code and local
// number, with the separators the domain allows in a local number removed.
const phoneDigits = `replace(replace(replace(replace(replace(
	json_extract(billing, '$.phone_number.local_number'), ' ', ''), '-', ''), '(', ''), ')', ''), '+', '')`

// chargeCard keeps the charges whose token has the card and phone the
// filter names (payment.ChargeFilter.MatchesToken).
func chargeCard(c *conditions, f payment.ChargeFilter) {
	var tok conditions
	if f.Cardholder != "" {
		tok.add("lower(cardholder) = lower(?)", f.Cardholder)
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
		tok.add("("+phoneDigits+" = ? OR json_extract(billing, '$.phone_number.country_code') || "+phoneDigits+" = ?)",
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
	c.add("(id = ? OR charge_id = ? OR charge_id IN (SELECT id FROM charges WHERE last_four = ? OR "+containsFold("email")+"))",
		q, q, q, q)
}

// metadataMatches keeps the rows whose metadata column holds key with a
// value whose text is value (payment.Metadata.Matches: `order_id: 123`
// finds the string "123" and the number 123). A number is compared by its
// JSON text as written (-> keeps it; json_extract would round
// 12345678901234567890 through a float and turn 1.50 into 1.5), a boolean
// as true/false (json_extract gives 1/0); arrays and nulls never match.
func metadataMatches(c *conditions, key, value string) {
	path := "'$.' || json_quote(?)"
	c.add(`CASE json_type(metadata, `+path+`)
			WHEN 'text' THEN json_extract(metadata, `+path+`)
			WHEN 'integer' THEN metadata -> (`+path+`)
			WHEN 'real' THEN metadata -> (`+path+`)
			WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' END = ?`,
		key, key, key, key, value)
}
