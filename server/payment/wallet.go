package payment

// WalletData is what an online or QR-merchant token holds: the wallet, and
// for online wallets how the shopper's device reaches it.
type WalletData struct {
	Brand          string `json:"brand"`
	CallMethod     string `json:"call_method,omitempty"`
	OSType         string `json:"os_type,omitempty"`
	UserIdentifier string `json:"user_identifier,omitempty"`
}

// WalletInput is WalletData as the client sends it.
type WalletInput = WalletData
