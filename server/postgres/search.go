package postgres

import (
	"strings"

	"github.com/kessai/kessai/server/payment"
)

// The list filters that look into more than one column: token search, the
// card and phone of a charge's token, the transaction history's search and
// metadata. The domain folds ASCII letters only
// (payment.TransactionToken.MatchesSearch); PostgreSQL's lower(), upper()
// and ILIKE fold every letter the collation knows (É to é), so the
// conditions fold with translate() over A-Z alone, and find a term with
// strpos(), which gives % and _ no meaning.

// foldASCII is the SQL expression of expr with the ASCII capitals made
// small letters and every other character as it is.
func foldASCII(expr string) string {
	return "translate(" + expr + ", 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
}

// containsFold is the condition "column contains ?, ASCII letters in any
// case".
func containsFold(column string) string {
	return "strpos(" + foldASCII(column) + ", " + foldASCII("?::text") + ") > 0"
}

// equalFold is the condition "column is ?, ASCII letters in any case".
func equalFold(column string) string {
	return foldASCII(column) + " = " + foldASCII("?::text")
}

// tokenSearch keeps the tokens that payment.TransactionToken.MatchesSearch
// the term: its e-mail or cardholder contains it, or it is the last four.
func tokenSearch(c *conditions, q string) {
	c.add("(last_four = ? OR "+containsFold("email")+" OR "+containsFold("cardholder")+")", q, q, q)
}

// phoneDigits is a token's billing phone number, country code and local
// number, with the separators the domain allows in a local number removed.
const phoneDigits = `replace(replace(replace(replace(replace(
	billing::json #>> '{phone_number,local_number}', ' ', ''), '-', ''), '(', ''), ')', ''), '+', '')`

// chargeCard keeps the charges whose token has the card and phone the
// filter names (payment.ChargeFilter.MatchesToken).
func chargeCard(c *conditions, f payment.ChargeFilter) {
	var tok conditions
	if f.Cardholder != "" {
		tok.add(equalFold("cardholder"), f.Cardholder)
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
		tok.add("("+phoneDigits+" = ? OR (billing::json #>> '{phone_number,country_code}') || "+phoneDigits+" = ?)",
			f.Phone, f.Phone)
	}
	if len(tok.parts) > 0 {
		c.add("token_id IN (SELECT id FROM tokens WHERE "+strings.Join(tok.parts, " AND ")+")", tok.args...)
	}
}

// ledgerSearch keeps the history lines payment.LedgerFilter.Search finds:
// the line's resource or charge is the term, or its charge's e-mail
// contains it, or its charge's card ends in it. The term is compared with
// the ids as text: a term that is no UUID is no error, it finds no id.
func ledgerSearch(c *conditions, q string) {
	c.add("(id::text = ? OR charge_id::text = ? OR charge_id IN (SELECT id FROM charges WHERE last_four = ? OR "+
		containsFold("email")+"))", q, q, q, q)
}

// metadataValue is the SQL text of a JSON value v (an expression of type
// json) as payment.Metadata.Matches compares it: a string itself, a number
// as its JSON text as written (the json type keeps it: 1.50 stays 1.50 and
// 12345678901234567890 is not rounded), a boolean as true/false; objects,
// arrays and nulls are NULL and never match.
func metadataValue(v string) string {
	return `CASE json_typeof(` + v + `) WHEN 'string' THEN ` + v + ` #>> '{}'
		WHEN 'number' THEN ` + v + `::text WHEN 'boolean' THEN ` + v + `::text END`
}

// metadataMatches keeps the rows whose metadata column holds key with a
// value whose text is value (payment.Metadata.Matches: `order_id: 123`
// finds the string "123" and the number 123).
func metadataMatches(c *conditions, key, value string) {
	c.add(metadataValue("(metadata::json -> ?::text)")+" = ?", key, key, key, key, value)
}
