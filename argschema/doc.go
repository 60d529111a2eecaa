// Package argschema checks a tool's input against a JSON Schema before the
// tool runs (inside the layer that turns failures into the model's message,
// before the fallback and every attempt). A bad argument is the model's to fix:
// the call ends as args-invalid, no attempt is made, and the model is told
// which argument is wrong and how, for example
//
//	search was not called: the input is invalid: argument "query" is missing;
//	argument "limit" must be an integer, not a string. Fix the input and call
//	it again.
//
// # The input
//
// A tool's input is its arguments as one JSON object, such as
// {"query":"late invoices","limit":10}. Input that is not JSON, or JSON that
// is not an object, is args-invalid too, so the schema describes that object:
// its root must be a JSON Schema object whose type, if given, is "object".
//
// # The schema
//
// Schemas are JSON Schema draft 2020-12 unless their "$schema" names another
// draft (4, 6, 7 or 2019-09). "format" is asserted, not just an annotation:
// {"format":"email"} rejects "not-an-email". A "$ref" may point inside the
// schema ("#/$defs/date") but not to another file or URL: the schema is
// checked once, when it is compiled, and never fetches anything.
//
// Use it through toolsafe.WithArgsSchema, the args_schema field of a
// policies file (package policyfile), or on its own as a middleware.Middleware:
//
//	check, err := argschema.Validate([]byte(`{"type":"object","required":["query"]}`))
//	if err != nil { ... }
//	tool := middleware.Chain(layer.Surface(), check)(search)
package argschema
