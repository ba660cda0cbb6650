package checks

import (
	"strings"
	"testing"
)

// TestPushFailedSummary: a run whose branch could not be pushed fails its
// summary check whatever its nodes did, and says so first; a cancelled
// run stays cancelled.
func TestPushFailedSummary(t *testing.T) {
	const reason = "kilroy/run/ci/r1: git push exited 128: fatal: unable to access: The requested URL returned error: 502"
	for _, tc := range []struct {
		name      string
		view      func(t *testing.T) *RunView
		wantTitle string // after the push's reason, clipped
		wantConcl string
	}{
		{"passed", branchRun, " · 5 of 6 nodes passed · 1 node skipped", ConclusionFailure},
		{"failed", failedRun, " · 2 of 5 nodes passed · vet failed (2 findings)", ConclusionFailure},
		{"cancelled", supersededRun, "", ConclusionCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.view(t)
			v.PushError = reason
			_, concl := RunConclusion(v)
			title, summary, _ := Summary(v, RenderOptions{})
			if concl != tc.wantConcl {
				t.Errorf("conclusion %s, want %s", concl, tc.wantConcl)
			}
			if tc.wantTitle == "" {
				return
			}
			if !strings.HasPrefix(title, "run branch not pushed: kilroy/run/ci/r1: git push exited 128") ||
				!strings.HasSuffix(title, tc.wantTitle) || len(title) > maxTitle {
				t.Errorf("title %q, want the push's reason, then %q", title, tc.wantTitle)
			}
			first, _, _ := strings.Cut(summary, "\n")
			if want := "❌ **Run branch not pushed**: " + reason; !strings.HasPrefix(first, want) {
				t.Errorf("summary's first line %q, want it to start %q", first, want)
			}
		})
	}
}
