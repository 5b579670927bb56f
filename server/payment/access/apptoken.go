package access

// maxDomains bounds a token's domain list; it is checked on every browser
// request.
const maxDomains = 50
