package payment

// StartsOn is the day the subscription's recurring payments start, as its
// schedule_settings.start_on shows it: the day asked for; else, after an
// initial amount (charged, or a free first period), its anchor, one cycle
// after the day it was made; else nil, for recurring payments that start
// the day it was made. An update may repeat it as shown.
func (sub *Subscription) StartsOn() *Date {
	switch {
	case sub.Schedule.StartOn != nil:
		d := *sub.Schedule.StartOn
		return &d
	case sub.InitialAmount != nil && !sub.Anchor.IsZero():
		d := sub.Anchor
		return &d
	}
	return nil
}
