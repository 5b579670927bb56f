package payment

// ChargeQR is the code a merchant shows for a QR-merchant charge: Ready
// once the wallet's payment is open, with the address of its PNG.
type ChargeQR struct {
	Ready    bool
	ImageURL string
}
