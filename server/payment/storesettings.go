package payment

import (
	"slices"
	"strings"

	"github.com/kessai/kessai/wasm/card"
)

// CardBrands are the card brands a store may refuse: every brand the
// widget and the tokens recognise (wasm/card).
func CardBrands() []string {
	var out []string
	for _, b := range []card.Brand{card.Visa, card.Mastercard, card.JCB, card.AmericanExpress, card.DinersClub,
		card.Discover, card.UnionPay, card.Maestro} {
		out = append(out, string(b))
	}
	return out
}

// StoreUpdate changes a store's name and settings; a nil field stays as
// it is.
type StoreUpdate struct {
	Name            *string
	PCICompliant    *bool
	CardEnabled     *bool
	ThreeDSRequired *bool
	// ForbiddenCardBrands replaces the list (empty: every brand).
	ForbiddenCardBrands *[]string
	RecurringType       *RecurringPrivilege
	Theme               *Theme
	KonbiniEnabled      *bool
	BankTransferEnabled *bool
	MatchAmount         *MatchAmount
}

// maxStoreName bounds a store's name.
const maxStoreName = 100

// validColour is a theme colour: #rgb or #rrggbb, which every page and
// the widget's CSS can take as it is.
func validColour(s string) bool {
	if len(s) != 4 && len(s) != 7 || s[0] != '#' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

func (u *StoreUpdate) Check() error {
	var v Validation
	if u.Name != nil {
		*u.Name = strings.TrimSpace(*u.Name)
		if *u.Name == "" {
			v.Add("name", ReasonRequired)
		} else {
			CheckText(&v, "name", *u.Name, maxStoreName)
		}
	}
	if u.ForbiddenCardBrands != nil {
		brands := []string{}
		for _, b := range *u.ForbiddenCardBrands {
			b = asciiLower(strings.TrimSpace(b))
			if !slices.Contains(CardBrands(), b) {
				v.Add("forbidden_card_brands", "BRAND_NOT_DEFINED")
				break
			}
			if !slices.Contains(brands, b) {
				brands = append(brands, b)
			}
		}
		slices.Sort(brands)
		*u.ForbiddenCardBrands = brands
	}
	if u.RecurringType != nil {
		switch *u.RecurringType {
		case RecurringNone, RecurringBounded, RecurringInfinite:
		default:
			v.Add("recurring_type", ReasonInvalidFormat)
		}
	}
	if u.MatchAmount != nil && !u.MatchAmount.Valid() {
		v.Add("match_amount", ReasonInvalidFormat)
	}
	if t := u.Theme; t != nil {
		for _, f := range []struct{ name, value string }{
			{"main_background", t.MainBackground}, {"secondary_background", t.SecondaryBackground},
			{"main_color", t.MainColor}, {"main_text", t.MainText}, {"primary_text", t.PrimaryText},
			{"secondary_text", t.SecondaryText}, {"base_text", t.BaseText}, {"body_background", t.BodyBackground},
		} {
			if !validColour(f.value) {
				v.Add("theme."+f.name, ReasonInvalidFormat)
			}
		}
	}
	return v.Err()
}
