package message

// Periods is how an amount a subscription charges every period is written,
// wherever one is shown: the widget frame, the hosted link form and the
// demo storefront ("¥980 / month", "¥980 / 月"). The named periods are
// UnivaPay's (subscription period); a cyclical period (an ISO 8601
// duration) is written with the every_* texts, its count filled in, or,
// when it mixes months and days, with every_other and the duration itself.
// initial, start and cycles add what else the shopper agrees to: a first
// payment of another amount, a later first payment, a fixed number of
// payments. subscribe is the pay button's label.
var Periods = newTable("subscription periods", map[string]Text{
	"daily":        {"%s / day", "%s / 日"},
	"weekly":       {"%s / week", "%s / 週"},
	"biweekly":     {"%s every 2 weeks", "%s / 2週間"},
	"monthly":      {"%s / month", "%s / 月"},
	"bimonthly":    {"%s every 2 months", "%s / 2か月"},
	"quarterly":    {"%s every 3 months", "%s / 3か月"},
	"semiannually": {"%s every 6 months", "%s / 6か月"},
	"annually":     {"%s / year", "%s / 年"},
	"every_days":   {"%s every %d days", "%s / %d日"},
	"every_weeks":  {"%s every %d weeks", "%s / %d週間"},
	"every_months": {"%s every %d months", "%s / %dか月"},
	"every_years":  {"%s every %d years", "%s / %d年"},
	"every_other":  {"%s every %s", "%s / 期間 %s"},
	"initial":      {"%s today, then %s", "初回 %s、以降 %s"},
	"start":        {"%s from %s", "%s（%s から）"},
	"cycles":       {"%s, %d payments", "%s（全%d回）"},
	"subscribe":    {"Subscribe: %s", "%s で申し込む"},
})
