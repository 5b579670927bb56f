package payment

// CheckoutInfo is what the widget needs to know about the store it takes a
// payment for.
type CheckoutInfo struct {
	Store *Store
	Mode  Mode
}
