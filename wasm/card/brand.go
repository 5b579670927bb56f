package card

// Brand is a card network, spelled as the UnivaPay wire format spells it.
type Brand string

// The brands. Unknown is a number no known range claims, or a prefix too
// short to tell; it is not an error in itself.
const (
	Visa            Brand = "visa"
	Mastercard      Brand = "mastercard"
	JCB             Brand = "jcb"
	AmericanExpress Brand = "american_express"
	DinersClub      Brand = "diners_club"
	Discover        Brand = "discover"
	UnionPay        Brand = "unionpay"
	Maestro         Brand = "maestro"
	Unknown         Brand = "unknown"
)

// binWidth is how many leading digits decide the brand: the longest range
// below is six digits wide.
const binWidth = 6

// iinRange is a block of issuer identification numbers: every number whose
// first width digits lie in lo..hi (inclusive) belongs to brand, unless a
// narrower range inside it says otherwise.
type iinRange struct {
	lo, hi int32
	width  int8
	brand  Brand
}

// iinRanges is the brand table. Where ranges nest, the wider prefix (the more
// specific range) wins, so an exception is simply a longer entry; no two
// entries of the same width overlap (a test checks).
//
// 622126–622925 is inside UnionPay's 62. Those cards are issued in China
// under UnionPay, and that block is the one the Discover network routes
// (the two networks' acceptance alliance), so card tables that follow the
// networks' published ranges list it as Discover. We follow the ranges:
// 622126–622925 is discover, the rest of 62 is unionpay. The choice changes
// only the logo and the brand recorded: both brands take 16–19 digits, a
// three-digit code and the same grouping. Moving the block to UnionPay is
// deleting its line.
var iinRanges = [...]iinRange{
	{4, 4, 1, Visa},

	{51, 55, 2, Mastercard},
	{2221, 2720, 4, Mastercard},

	{3528, 3589, 4, JCB},

	{34, 34, 2, AmericanExpress},
	{37, 37, 2, AmericanExpress},

	{300, 305, 3, DinersClub},
	{3095, 3095, 4, DinersClub},
	{36, 36, 2, DinersClub},
	{38, 39, 2, DinersClub},

	{6011, 6011, 4, Discover},
	{644, 649, 3, Discover},
	{65, 65, 2, Discover},
	{622126, 622925, 6, Discover},

	{62, 62, 2, UnionPay},
	{81, 81, 2, UnionPay},

	{50, 50, 2, Maestro},
	{56, 58, 2, Maestro},
	{6304, 6304, 4, Maestro},
	{6390, 6390, 4, Maestro},
	{6759, 6759, 4, Maestro},
	{6761, 6763, 4, Maestro},
	{676770, 676770, 6, Maestro},
	{676774, 676774, 6, Maestro},
}

var pow10 = [...]int{1, 10, 100, 1000, 10000, 100000, 1000000}

// span returns the range as six-digit prefixes, so that ranges of different
// widths can be compared.
func (r iinRange) span() (lo, hi int) {
	m := pow10[binWidth-int(r.width)]
	return int(r.lo) * m, (int(r.hi)+1)*m - 1
}

// brandAt returns the brand of the six-digit prefix v.
func brandAt(v int) Brand {
	best, bestWidth := Unknown, int8(0)
	for _, r := range iinRanges {
		if lo, hi := r.span(); lo <= v && v <= hi && r.width > bestWidth {
			best, bestWidth = r.brand, r.width
		}
	}
	return best
}

// DetectBrand returns the brand of number, which may be a prefix still being
// typed. A prefix gets a brand only once every number it could grow into has
// that brand: "4" is already visa and "34" american_express, but "35" stays
// unknown until "3528", since 3500–3527 belong to nobody. The widget can
// therefore show a logo as soon as it is certain and never has to take it
// back while digits are only added.
func DetectBrand(number string) Brand {
	d := Digits(number)
	n := len(d)
	if n == 0 {
		return Unknown
	}
	if n > binWidth {
		d, n = d[:binWidth], binWidth
	}
	p := 0
	for i := 0; i < n; i++ {
		p = p*10 + int(d[i]-'0')
	}
	// The prefix stands for every six-digit prefix in [first, last]. The
	// brand is constant between range edges, so it is the same throughout
	// if it is the same at first and at every edge inside.
	m := pow10[binWidth-n]
	first, last := p*m, (p+1)*m-1
	b := brandAt(first)
	for _, r := range iinRanges {
		lo, hi := r.span()
		if first < lo && lo <= last && brandAt(lo) != b {
			return Unknown
		}
		if first <= hi && hi < last && brandAt(hi+1) != b {
			return Unknown
		}
	}
	return b
}

// lengths returns the valid number lengths of b as a bit set (bit n set
// means n digits is valid). Anything that is not a known brand is treated as
// Unknown, which accepts the full ISO/IEC 7812 span of 12–19 digits so that
// a card from a network missing above is not refused for its length alone.
func (b Brand) lengths() uint32 {
	switch b {
	case Visa:
		return 1<<13 | 1<<16 | 1<<19
	case Mastercard:
		return 1 << 16
	case AmericanExpress:
		return 1 << 15
	case DinersClub:
		return lengthSpan(14, 19)
	case JCB, Discover, UnionPay:
		return lengthSpan(16, 19)
	default: // Maestro, Unknown
		return lengthSpan(12, 19)
	}
}

func lengthSpan(lo, hi int) uint32 {
	return 1<<(hi+1) - 1<<lo
}

// ValidLength reports whether a number of n digits can be a b card.
func (b Brand) ValidLength(n int) bool {
	return n >= 0 && n < 32 && b.lengths()&(1<<n) != 0
}

// MinLength is the fewest digits a b card has; fewer is incomplete.
func (b Brand) MinLength() int {
	for n := 0; n < 32; n++ {
		if b.ValidLength(n) {
			return n
		}
	}
	return 0
}

// MaxLength is the most digits a b card has, where the widget stops
// accepting keystrokes.
func (b Brand) MaxLength() int {
	for n := 31; n > 0; n-- {
		if b.ValidLength(n) {
			return n
		}
	}
	return 0
}

// CVVLength is how many digits b's security code has: four on the front of
// an American Express card, three on the back of the others. For Unknown it
// is 3, but CVVState also accepts 4 then, so that a code is not refused
// because of a number it cannot see the brand of.
func (b Brand) CVVLength() int {
	if b == AmericanExpress {
		return 4
	}
	return 3
}
