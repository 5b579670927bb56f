package payment

import (
	"github.com/google/uuid"
)

// DemoEmail is the console login of the merchant created on first start.
const DemoEmail = "demo@kessai.test"

// DemoAccount is what first start hands to a new user: a merchant, its
// console login, a store and a test-mode token for it.
type DemoAccount struct {
	MerchantID      uuid.UUID
	StoreID         uuid.UUID
	ConsoleEmail    string
	ConsolePassword string
	Token           *IssuedAppToken
}
