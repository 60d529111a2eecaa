package policyfile

import (
	"fmt"
	"math"
	"strings"
)

// suggest returns `; did you mean "timeout"?` when word is a likely typo of
// one of known, else "".
func suggest(word string, known []string) string {
	best, bestDist := "", math.MaxInt
	for _, k := range known {
		if dist := editDistance(strings.ToLower(word), k); dist <= maxTypo(k) && dist < bestDist {
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
