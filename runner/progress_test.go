package runner

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
)

// TestLiveProgress checks the lines a person watching a local run reads:
// the run directory before any node runs, a line when each node starts
// (so a long node is not silence), every retried attempt, and each end.
func TestLiveProgress(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "tried")
	// The first attempt asks for a retry; the second succeeds.
	flaky := `if [ -e ` + marker + ` ]; then exit 0; fi; touch ` + marker +
		`; printf '{"status":"retry","failure_reason":"flaked"}' > "$KILROY_STAGE_STATUS_PATH"`
	repo := gittest.NewRepo(t, map[string]string{
		".kilroy/ci.dot": pipeline(`
  flaky [shape=parallelogram, max_retries=2, retry.backoff.initial="1ms", tool_command=` + quote(flaky) + `]
  start -> flaky -> exit`),
	})
	o := localOptions(t, repo)
	var live bytes.Buffer
	o.Live = &live
	p, res := runLocal(t, o)
	if res.Status != attractor.StatusSuccess {
		t.Fatalf("run status = %s (%s), want success", res.Status, res.FailureReason)
	}
	want := []string{
		"kilroy: run " + p.RunID + " of ci on " + p.Branch + " (base " + short(p.BaseSHA) + ")",
		"kilroy: run directory " + string(p.Dir),
		"start started",
		"start success DUR",
		"flaky started",
		"flaky retry DUR attempt 1 of 3, retrying flaked",
		"flaky success DUR after 2 attempts",
		"exit started",
		"exit success DUR",
		"kilroy: run " + p.RunID + " success in DUR",
	}
	if diff := cmp.Diff(liveLines(live.String()), want); diff != "" {
		t.Errorf("live progress (-got +want):\n%s", diff)
	}
}

// durations matches what time.Duration.String prints.
var durations = regexp.MustCompile(`\b[0-9][0-9.]*(ns|µs|ms|s|m|h)([0-9.]+(ms|s|m))*\b`)

// liveLines returns the progress lines with durations replaced by DUR and
// runs of spaces (column padding) collapsed.
func liveLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		l = durations.ReplaceAllString(l, "DUR")
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}
