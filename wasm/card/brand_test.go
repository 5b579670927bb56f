package card

import "testing"

// sandboxCards are the numbers the sandbox acquirer documents, plus the
// networks' own well-known test numbers for the brands it has none of. Every
// one must be accepted and recognised, or a merchant's integration test
// fails at the first step.
var sandboxCards = []struct {
	number string
	brand  Brand
}{
	{"4000020000000000", Visa},
	{"4242424242424242", Visa},
	{"4111111111111111", Visa},
	{"5555555555554444", Mastercard},
	{"3530111333300000", JCB},
	{"378282246310005", AmericanExpress},
	{"30569309025904", DinersClub},
	{"4000000000000002", Visa},
	{"4000000000009995", Visa},
	{"4000000000000069", Visa},
	{"4000000000000127", Visa},
	{"4000000000000119", Visa},
	{"4000000000009987", Visa},
	{"4000000000009979", Visa},
	{"4100000000000019", Visa},
	{"4000000000000341", Visa},
	{"4000002760003184", Visa},
	{"4000008400001629", Visa},
	{"4000000000003220", Visa},
	{"4000000000003063", Visa},
	{"4000000000003055", Visa},
	{"4000000000003097", Visa},
	{"6011111111111117", Discover},
	{"6200000000000005", UnionPay},
	{"6759649826438453", Maestro},
}

func TestSandboxCards(t *testing.T) {
	for _, c := range sandboxCards {
		t.Run(c.number, func(t *testing.T) {
			if !Luhn(c.number) {
				t.Error("Luhn failed")
			}
			if got := DetectBrand(c.number); got != c.brand {
				t.Errorf("DetectBrand = %q, want %q", got, c.brand)
			}
			if !c.brand.ValidLength(len(c.number)) {
				t.Errorf("length %d not valid for %s", len(c.number), c.brand)
			}
			if got := NumberState(c.number); got != "" {
				t.Errorf("NumberState = %q, want valid", got)
			}
			if got := NumberState(Format(c.number)); got != "" {
				t.Errorf("NumberState(Format) = %q, want valid", got)
			}
			in := goodInput()
			in.Number = c.number
			in.CVV = "123"
			if c.brand == AmericanExpress {
				in.CVV = "1234"
			}
			assertProblems(t, Validate(in, testNow))
		})
	}
}

func TestDetectBrand(t *testing.T) {
	tests := []struct {
		prefix string
		want   Brand
	}{
		{"", Unknown},
		{"4", Visa},
		{"4 2", Visa},
		{"51", Mastercard},
		{"55", Mastercard},
		{"5", Unknown}, // 50 is maestro, 51–55 mastercard
		{"56", Maestro},
		{"58", Maestro},
		{"59", Unknown},
		{"50", Maestro},
		{"2", Unknown},
		{"22", Unknown},
		{"222", Unknown},
		{"2221", Mastercard},
		{"223", Mastercard},
		{"23", Mastercard},
		{"26", Mastercard},
		{"27", Unknown},
		{"272", Unknown},
		{"2720", Mastercard},
		{"2721", Unknown},
		{"2220", Unknown},
		{"3", Unknown},
		{"34", AmericanExpress},
		{"37", AmericanExpress},
		{"35", Unknown},
		{"352", Unknown},
		{"3527", Unknown},
		{"3528", JCB},
		{"353", JCB},
		{"358", JCB},
		{"3589", JCB},
		{"359", Unknown},
		{"30", Unknown},
		{"300", DinersClub},
		{"305", DinersClub},
		{"306", Unknown},
		{"309", Unknown},
		{"3095", DinersClub},
		{"3096", Unknown},
		{"36", DinersClub},
		{"38", DinersClub},
		{"39", DinersClub},
		{"6", Unknown},
		{"60", Unknown},
		{"601", Unknown},
		{"6011", Discover},
		{"6012", Unknown},
		{"64", Unknown},
		{"643", Unknown},
		{"644", Discover},
		{"649", Discover},
		{"65", Discover},
		{"62", Unknown}, // unionpay or, at 622126–622925, discover
		{"620", UnionPay},
		{"621", UnionPay},
		{"622", Unknown},
		{"6221", Unknown},
		{"622125", UnionPay},
		{"622126", Discover},
		{"6222", Discover},
		{"6229", Unknown},
		{"62291", Discover},
		{"62292", Unknown}, // 622926–622929 are unionpay
		{"622925", Discover},
		{"622926", UnionPay},
		{"623", UnionPay},
		{"8", Unknown},
		{"81", UnionPay},
		{"6304", Maestro},
		{"6390", Maestro},
		{"6759", Maestro},
		{"6761", Maestro},
		{"6763", Maestro},
		{"6767", Unknown},
		{"67677", Unknown},
		{"676770", Maestro},
		{"676774", Maestro},
		{"676771", Unknown},
		{"1", Unknown},
		{"0", Unknown},
		{"9999999999999999", Unknown},
		{"4242-4242", Visa},
	}
	for _, tt := range tests {
		if got := DetectBrand(tt.prefix); got != tt.want {
			t.Errorf("DetectBrand(%q) = %q, want %q", tt.prefix, got, tt.want)
		}
	}
}

// TestDetectBrandMonotonic checks the promise the widget relies on: once a
// prefix has a brand, typing more digits never changes it. Checking every
// prefix of up to five digits against its ten one-digit extensions covers
// all extensions by induction; past six digits the brand is fixed.
func TestDetectBrandMonotonic(t *testing.T) {
	prefixes := []string{""}
	for n := 0; n < binWidth; n++ {
		var next []string
		for _, p := range prefixes {
			b := DetectBrand(p)
			for c := byte('0'); c <= '9'; c++ {
				child := p + string(c)
				if cb := DetectBrand(child); b != Unknown && cb != b {
					t.Fatalf("DetectBrand(%q) = %q but DetectBrand(%q) = %q", p, b, child, cb)
				}
				next = append(next, child)
			}
		}
		prefixes = next
	}
}

// TestRangesDoNotOverlap guards the table's one rule: nested ranges are
// exceptions, so two ranges of the same width must never both claim a prefix.
func TestRangesDoNotOverlap(t *testing.T) {
	for i, a := range iinRanges {
		if a.lo > a.hi || a.width < 1 || a.width > binWidth {
			t.Errorf("range %d malformed: %+v", i, a)
		}
		for _, b := range iinRanges[i+1:] {
			alo, ahi := a.span()
			blo, bhi := b.span()
			if a.width == b.width && alo <= bhi && blo <= ahi {
				t.Errorf("%+v overlaps %+v", a, b)
			}
		}
	}
}

func TestLengths(t *testing.T) {
	tests := []struct {
		brand     Brand
		valid     []int
		min, max  int
		cvvLength int
	}{
		{Visa, []int{13, 16, 19}, 13, 19, 3},
		{Mastercard, []int{16}, 16, 16, 3},
		{AmericanExpress, []int{15}, 15, 15, 4},
		{DinersClub, []int{14, 15, 16, 17, 18, 19}, 14, 19, 3},
		{JCB, []int{16, 17, 18, 19}, 16, 19, 3},
		{Discover, []int{16, 17, 18, 19}, 16, 19, 3},
		{UnionPay, []int{16, 17, 18, 19}, 16, 19, 3},
		{Maestro, []int{12, 13, 14, 15, 16, 17, 18, 19}, 12, 19, 3},
		{Unknown, []int{12, 13, 14, 15, 16, 17, 18, 19}, 12, 19, 3},
		{Brand("bogus"), []int{12, 13, 14, 15, 16, 17, 18, 19}, 12, 19, 3},
	}
	for _, tt := range tests {
		t.Run(string(tt.brand), func(t *testing.T) {
			want := map[int]bool{}
			for _, n := range tt.valid {
				want[n] = true
			}
			for n := -1; n <= 40; n++ {
				if got := tt.brand.ValidLength(n); got != want[n] {
					t.Errorf("ValidLength(%d) = %v", n, got)
				}
			}
			if got := tt.brand.MinLength(); got != tt.min {
				t.Errorf("MinLength = %d, want %d", got, tt.min)
			}
			if got := tt.brand.MaxLength(); got != tt.max {
				t.Errorf("MaxLength = %d, want %d", got, tt.max)
			}
			if got := tt.brand.CVVLength(); got != tt.cvvLength {
				t.Errorf("CVVLength = %d, want %d", got, tt.cvvLength)
			}
		})
	}
}
