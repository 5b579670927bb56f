package payment

// PaymentTypeCard is the payment type of card tokens.
const PaymentTypeCard = "card"
