package webhook

// suggest returns the command nearest to word by edit distance, when it is
// close enough to be a typo: at most two edits, and fewer edits than the
// command has letters (so "x" suggests nothing).
func suggest(word string) string {
	best, bestDist := "", 3
	for _, v := range []Verb{VerbRun, VerbCancel, VerbHelp} {
		cand := string(v)
		if d := editDistance(word, cand); d < bestDist && d < len(cand) {
			best, bestDist = cand, d
		}
	}
	return best
}

// editDistance is the optimal string alignment distance between a and b,
// compared rune by rune: insertions, deletions, substitutions and
// transpositions of neighbours cost one each, so "rnu" is one edit from "run".
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// rows[i][j] is the distance between s[:i] and t[:j]; three rows suffice.
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
