package middleware

// Exported for the tests of package middleware_test only.
var ParseRetryAfter = parseRetryAfter

const MaxHTTPBody = maxHTTPBody
