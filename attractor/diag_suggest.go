package attractor

import "strings"

// suggest returns the candidate closest to name by edit distance, ignoring
// case, or "" when none is close enough to be the likely intent. Close
// enough: at most 2 edits, and fewer than half of name's length.
func suggest(name string, candidates []string) string {
	lname := strings.ToLower(name)
	best, bestD := "", 3
	for _, c := range candidates {
		if c == name || abs(len(c)-len(name)) >= bestD {
			continue
		}
		d := editDistanceWithin(lname, strings.ToLower(c), bestD-1)
		if d < bestD && d*2 < len(name) {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance between a and b
// in bytes: insertions, deletions, substitutions and swaps of two
// adjacent bytes ("plna" → "plan") each cost one.
func editDistance(a, b string) int {
	pp, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}

// editDistanceWithin is editDistance when that is at most k, else k+1.
// It fills only the band of cells within k of the diagonal, so comparing
// long names costs time in their length, not its square: a pipeline of
// thousands of long node IDs is checked name against name.
func editDistanceWithin(a, b string, k int) int {
	inf := k + 1
	if abs(len(a)-len(b)) > k {
		return inf
	}
	pp, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = min(j, inf)
	}
	for i := 1; i <= len(a); i++ {
		lo, hi := max(1, i-k), min(len(b), i+k)
		cur[0] = min(i, inf)
		if lo > 1 {
			cur[lo-1] = inf // outside the band, read as inf
		}
		for j := lo; j <= hi; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost, inf)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		if hi < len(b) {
			cur[hi+1] = inf
		}
		pp, prev, cur = prev, cur, pp
	}
	return min(prev[len(b)], inf)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// Suggest is suggest for other packages: the "did you mean" of pipeline
// names, commands and keys reads the same everywhere.
func Suggest(name string, candidates []string) string { return suggest(name, candidates) }
