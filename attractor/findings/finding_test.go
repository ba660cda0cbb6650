package findings

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func cmpDiff(got, want []Finding) string { return cmp.Diff(got, want) }

func TestLevelRank(t *testing.T) {
	order := []Level{LevelError, LevelWarning, LevelNotice, Level("bogus")}
	for i := 1; i < len(order); i++ {
		if order[i-1].Rank() <= order[i].Rank() {
			t.Errorf("%q.Rank() = %d, not above %q.Rank() = %d", order[i-1], order[i-1].Rank(), order[i], order[i].Rank())
		}
	}
}

func TestSortBySeverity(t *testing.T) {
	got := []Finding{
		fd("a", 1, 0, LevelNotice, "", "n1"),
		fd("a", 2, 0, LevelWarning, "", "w1"),
		fd("a", 3, 0, LevelError, "", "e1"),
		fd("a", 4, 0, LevelNotice, "", "n2"),
		fd("a", 5, 0, LevelError, "", "e2"),
		fd("a", 6, 0, LevelWarning, "", "w2"),
	}
	want := []Finding{
		fd("a", 3, 0, LevelError, "", "e1"),
		fd("a", 5, 0, LevelError, "", "e2"),
		fd("a", 2, 0, LevelWarning, "", "w1"),
		fd("a", 6, 0, LevelWarning, "", "w2"),
		fd("a", 1, 0, LevelNotice, "", "n1"),
		fd("a", 4, 0, LevelNotice, "", "n2"),
	}
	SortBySeverity(got)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("SortBySeverity mismatch (-got +want):\n%s", diff)
	}
}
