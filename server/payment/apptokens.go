package payment

// IssuedAppToken is a freshly created token with its secret, which is shown
// this once and never again.
type IssuedAppToken struct {
	*AppToken
	Secret string
}
