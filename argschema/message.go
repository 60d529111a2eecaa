package argschema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// maxProblems is how many problems the model is told about at most; the
// rest are counted.
const maxProblems = 6

var english = message.NewPrinter(language.English)

type problem struct {
	loc  []string
	text string
}

// describe turns a validation error into model-facing sentence fragments,
// one per wrong argument, in the order of the arguments.
func describe(ve *jsonschema.ValidationError) []string {
	var ps []problem
	collect(ve, &ps)
	if len(ps) == 0 {
		return []string{"it does not match the tool's argument schema"}
	}
	slices.SortStableFunc(ps, func(a, b problem) int { return slices.Compare(a.loc, b.loc) })
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p.text) {
			out = append(out, p.text)
		}
	}
	if len(out) > maxProblems {
		n := len(out) - maxProblems
		out = append(out[:maxProblems], fmt.Sprintf("and %d more problem%s", n, plural(n)))
	}
	return out
}

// collect adds the problems of e and its causes to ps: one for a failed
// combinator (anyOf, oneOf, not) as a whole, else one per missing or
// unexpected field, else one for the value at e's location.
func collect(e *jsonschema.ValidationError, ps *[]problem) {
	loc := e.InstanceLocation
	if text, ok := combinatorProblem(e.ErrorKind); ok {
		*ps = append(*ps, problem{loc, subject(loc) + text})
		return
	}
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			collect(c, ps)
		}
		return
	}
	if names, text, ok := fieldProblem(e.ErrorKind); ok {
		for _, name := range names {
			child := append(slices.Clip(loc), name)
			*ps = append(*ps, problem{child, subject(child) + text})
		}
		return
	}
	*ps = append(*ps, problem{loc, valueProblem(e.ErrorKind, subject(loc))})
}

// combinatorProblem is what follows the subject when a value fails anyOf,
// oneOf or not; ok is false for other kinds.
func combinatorProblem(ek jsonschema.ErrorKind) (text string, ok bool) {
	switch k := ek.(type) {
	case *kind.AnyOf:
		return " does not match any of the forms the schema allows", true
	case *kind.OneOf:
		if len(k.Subschemas) > 1 {
			return " matches more than one of the forms the schema allows; it must match exactly one", true
		}
		return " does not match any of the forms the schema allows", true
	case *kind.Not:
		return " has a form the schema does not allow", true
	}
	return "", false
}

// fieldProblem names the fields of an object that are missing, unexpected
// or badly named, and what follows each one's subject; ok is false for
// kinds about the value itself.
func fieldProblem(ek jsonschema.ErrorKind) (names []string, text string, ok bool) {
	switch k := ek.(type) {
	case *kind.Required:
		return k.Missing, " is missing", true
	case *kind.DependentRequired:
		return k.Missing, fmt.Sprintf(" is missing (it is needed when %s is given)", quoteName(k.Prop)), true
	case *kind.Dependency:
		return k.Missing, fmt.Sprintf(" is missing (it is needed when %s is given)", quoteName(k.Prop)), true
	case *kind.AdditionalProperties:
		return k.Properties, " is not an argument of this tool", true
	case *kind.PropertyNames:
		return []string{k.Property}, " has a name the schema does not allow", true
	}
	return nil, "", false
}

// valueProblem says what is wrong with the value named s.
func valueProblem(ek jsonschema.ErrorKind, s string) string {
	switch k := ek.(type) {
	case *kind.Type:
		return fmt.Sprintf("%s must be %s, not %s", s, typeList(k.Want), article(k.Got))
	case *kind.Enum:
		return fmt.Sprintf("%s must be %s", s, oneOf(k.Want))
	case *kind.Const:
		return fmt.Sprintf("%s must be %s", s, short(k.Want))
	case *kind.MinLength:
		return fmt.Sprintf("%s must be at least %d character%s long", s, k.Want, plural(k.Want))
	case *kind.MaxLength:
		return fmt.Sprintf("%s must be at most %d character%s long", s, k.Want, plural(k.Want))
	case *kind.Minimum:
		return fmt.Sprintf("%s must be at least %s", s, rat(k.Want))
	case *kind.Maximum:
		return fmt.Sprintf("%s must be at most %s", s, rat(k.Want))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("%s must be greater than %s", s, rat(k.Want))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("%s must be less than %s", s, rat(k.Want))
	case *kind.MultipleOf:
		return fmt.Sprintf("%s must be a multiple of %s", s, rat(k.Want))
	case *kind.Pattern:
		return fmt.Sprintf("%s must match the pattern %s", s, strconv.Quote(k.Want))
	case *kind.Format:
		return fmt.Sprintf("%s must be a valid %s", s, k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("%s must have at least %d item%s", s, k.Want, plural(k.Want))
	case *kind.MaxItems:
		return fmt.Sprintf("%s must have at most %d item%s", s, k.Want, plural(k.Want))
	case *kind.UniqueItems:
		return fmt.Sprintf("%s must not repeat an item (items %d and %d are equal)", s, k.Duplicates[0], k.Duplicates[1])
	case *kind.MinProperties:
		return fmt.Sprintf("%s must have at least %d field%s", s, k.Want, plural(k.Want))
	case *kind.MaxProperties:
		return fmt.Sprintf("%s must have at most %d field%s", s, k.Want, plural(k.Want))
	case *kind.FalseSchema:
		return s + " is not allowed"
	}
	return s + ": " + ek.LocalizedString(english)
}

// subject names the value at loc: "the input" for the root, else
// `argument "filter.since"` or `argument "ids[2]"`.
func subject(loc []string) string {
	if len(loc) == 0 {
		return "the input"
	}
	var b strings.Builder
	for i, tok := range loc {
		if _, err := strconv.ParseUint(tok, 10, 32); err == nil && i > 0 {
			fmt.Fprintf(&b, "[%s]", tok)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tok)
	}
	return "argument " + quoteName(b.String())
}

func article(t string) string {
	switch t {
	case "integer", "array", "object":
		return "an " + t
	case "null":
		return "null"
	}
	return "a " + t
}

func typeList(ts []string) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = article(t)
	}
	return strings.Join(parts, " or ")
}

func oneOf(vs []any) string {
	if len(vs) == 1 {
		return short(vs[0])
	}
	const most = 12
	parts := make([]string, 0, min(len(vs), most))
	for i, v := range vs {
		if i == most {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, short(v))
	}
	return "one of " + strings.Join(parts, ", ")
}

// short is v as JSON, cut to a length fit for a message.
func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	const most = 60
	if s := []rune(string(b)); len(s) > most {
		return string(s[:most]) + "…"
	}
	return string(b)
}

func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
