// Package hint makes the "did you mean" hints that racekit's errors give for
// a near miss of a name: a scenario command, a hook point, a teaching
// variant.
package hint

import "fmt"

// DidYouMean returns ` (did you mean "X"?)` for the candidate nearest to
// name, if one is within two edits, and "" otherwise.
func DidYouMean(name string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Distance is the Levenshtein distance between a and b.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
