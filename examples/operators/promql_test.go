package main

import (
	"regexp"
	"slices"
	"strings"
)

// promqlNames are the metric and label names a PromQL expression names,
// and the names of recording rules (those with a colon) it reads.
type promqlNames struct {
	metrics, labels []string
}

// keywords are PromQL's aggregations and operators that read like names.
var keywords = []string{"sum", "min", "max", "avg", "count", "stddev", "stdvar", "topk", "bottomk", "quantile",
	"count_values", "group", "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
	"bool", "offset", "inf", "nan"}

// grouping are the keywords whose parenthesised list holds label names.
var grouping = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// labelValues is Grafana's label_values(metric, label) query.
var labelValues = regexp.MustCompile(`^label_values\(\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$`)

// namesIn reads the names of expr: identifiers inside {...} and in the
// lists of by, without, on, ignoring and group_left/right are labels; one
// followed by "(" is a function; keywords are skipped; the rest are
// metrics. Strings, numbers and durations are skipped.
func namesIn(expr string) promqlNames {
	var n promqlNames
	if m := labelValues.FindStringSubmatch(strings.TrimSpace(expr)); m != nil {
		n.metrics, n.labels = []string{m[1]}, []string{m[2]}
		return n
	}
	braces, list := 0, false
	expectList := false
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			i = j + 1
		case c >= '0' && c <= '9' || c == '.':
			j := i
			for j < len(expr) && (isNameChar(expr[j]) || expr[j] == '.') {
				j++
			}
			i = j
		case isNameStart(c):
			j := i
			for j < len(expr) && isNameChar(expr[j]) {
				j++
			}
			word := expr[i:j]
			i = j
			k := j
			for k < len(expr) && expr[k] == ' ' {
				k++
			}
			switch {
			case braces > 0 || list:
				n.labels = append(n.labels, word)
			case slices.Contains(grouping, word):
				expectList = true
			case slices.Contains(keywords, strings.ToLower(word)):
			case k < len(expr) && expr[k] == '(':
				// a function
			default:
				n.metrics = append(n.metrics, word)
			}
		case c == '{':
			braces++
			i++
		case c == '}':
			braces--
			i++
		case c == '(':
			if expectList {
				list, expectList = true, false
			}
			i++
		case c == ')':
			list = false
			i++
		default:
			i++
		}
	}
	return n
}

func isNameStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }
