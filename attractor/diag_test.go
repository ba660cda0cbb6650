package attractor

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestSuggest(t *testing.T) {
	names := []string{"implement", "plan", "review", "start", "exit"}
	tests := []struct{ in, want string }{
		{"implment", "implement"},
		{"plna", "plan"},
		{"Review", "review"},
		{"reviw", "review"},
		{"deploy", ""},
		{"ex", ""},
	}
	for _, tt := range tests {
		if got := suggest(tt.in, names); got != tt.want {
			t.Errorf("suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"", "ab", 2}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"plna", "plan", 1}}
	for _, tt := range tests {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDiagnosticsSort(t *testing.T) {
	ds := Diagnostics{
		{Rule: "b", File: "a.dot", Line: 2, Col: 1},
		{Rule: "a", File: "a.dot", Line: 1, Col: 5},
		{Rule: "c", File: "a.dot", Line: 2, Col: 1},
		{Rule: "d", File: "a.dot", Line: 1, Col: 2},
	}
	ds.Sort()
	got := ""
	for _, d := range ds {
		got += d.Rule
	}
	if got != "dabc" {
		t.Errorf("sorted order %s, want dabc (position, then emission order)", got)
	}
}

func sortStrings() cmp.Option {
	return cmpopts.SortSlices(func(a, b string) bool { return a < b })
}

// TestEditDistanceWithin: the banded distance agrees with the full one
// up to its bound, on every pair of short strings over a small alphabet
// (where swaps, repeats and near misses are common).
func TestEditDistanceWithin(t *testing.T) {
	var words []string
	var gen func(prefix string)
	gen = func(prefix string) {
		words = append(words, prefix)
		if len(prefix) < 4 {
			for _, c := range "abc" {
				gen(prefix + string(c))
			}
		}
	}
	gen("")
	for _, a := range words {
		for _, b := range words {
			for k := range 3 {
				want := min(editDistance(a, b), k+1)
				if got := editDistanceWithin(a, b, k); got != want {
					t.Fatalf("editDistanceWithin(%q, %q, %d) = %d, want %d", a, b, k, got, want)
				}
			}
		}
	}
}
