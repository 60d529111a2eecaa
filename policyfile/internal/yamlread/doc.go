// Package yamlread reads a YAML document of bounded cost for package
// policyfile: it refuses input past its limits before the YAML parser
// (goccy/go-yaml) sees it, parses the rest, and walks the syntax tree with
// positions, anchors, aliases and merge keys, decoding scalars and
// reporting each problem at a place the caller tracks.
//
// The limits exist because the parser's time and memory grow with the
// square of the nesting, of the keys of one block mapping and of the empty
// values, and it recurses once per level, per key and per document: without
// them a file of a few hundred kilobytes could take gigabytes, minutes, or
// the whole stack.
package yamlread
