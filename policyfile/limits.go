package policyfile

// MaxDepth is the deepest a policies file may nest: mappings and lists
// inside each other, aliases followed. 64 leaves room for deep JSON
// Schemas.
const MaxDepth = 64

// MaxRetries is the most retries a policies file allows, in defaults or a
// tool: 10 retries, 11 attempts. Past a few retries a failing upstream
// only gets more load; a longer wait comes from the backoff and the
// deadline, not from more attempts. Code may ask for more with
// toolsafe.WithRetry.
const MaxRetries = 10
