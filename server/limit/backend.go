package limit

// AddBucket appends one bucket to r, in the order the request listed them.
// It is for back ends outside this package (server/redis), which build the
// Result of their own decisions.
func (r *Result) AddBucket(b BucketResult) { r.add(b) }
