package storagetest

// allOf is the rule that holds for an item when every one of rules does:
// the list tests pick the items a filter must return with such rules.
func allOf[T any](rules ...func(T) bool) func(T) bool {
	return func(item T) bool {
		for _, r := range rules {
			if !r(item) {
				return false
			}
		}
		return true
	}
}
