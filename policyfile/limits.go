package policyfile

// MaxDepth is the deepest a policies file may nest: mappings and lists
// inside each other, aliases followed. 64 leaves room for deep JSON
// Schemas.
const MaxDepth = 64
