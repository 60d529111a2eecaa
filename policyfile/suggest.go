package policyfile

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// The names of a file (its tools, its dependencies) and of the tools passed
// to WrapAll can number in the tens of thousands: problems name at most
// listedNames of them, and suggest one for at most suggestedNames problems,
// among at most suggestAmong names.
const (
	listedNames    = 10
	suggestedNames = 100
	suggestAmong   = 1000
)

// nameList writes names as "a, b, c", or "a, b, ... and 12 more" past
// listedNames.
func nameList(names []string) string {
	if len(names) <= listedNames {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:listedNames], ", "), len(names)-listedNames)
}

// suggestName is suggest for a list of names, within the budget of ps.
func (ps *problems) suggestName(word string, names []string) string {
	if ps.suggested >= suggestedNames || len(names) > suggestAmong {
		return ""
	}
	ps.suggested++
	return suggest(word, names)
}

// suggest returns `; did you mean "timeout"?` when word is a likely typo of
// one of known, else "". Words whose lengths differ by more than a typo are
// not compared, so the time is about len(known) × len(word)².
func suggest(word string, known []string) string {
	best, bestDist := "", math.MaxInt
	lower := strings.ToLower(word)
	n := utf8.RuneCountInString(lower)
	for _, k := range known {
		if d := n - utf8.RuneCountInString(k); d > maxTypo(k) || -d > maxTypo(k) {
			continue
		}
		if dist := editDistance(lower, k); dist <= maxTypo(k) && dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

func maxTypo(k string) int {
	if len(k) <= 4 {
		return 1
	}
	return 2
}

// editDistance is the Damerau–Levenshtein distance (with adjacent
// transpositions) between a and b; words longer than 64 runes are never
// close.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		return 1 << 30
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
