package runpage_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runpage"
)

// TestLoadJournal: a run directory of version 2, checkpoint.json without
// the state and the checkpoints in checkpoints.ndjson, shows the same
// page as the version 1 one with the state in checkpoint.json.
func TestLoadJournal(t *testing.T) {
	runsDir, f := newRun(t)
	writeFullRun(f)
	p := newPages(t, runsDir, runpage.Options{})
	v1, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	f.json("checkpoint.json", map[string]any{
		"version": 2, "run_id": runID, "pipeline": "ci", "branch": "kilroy/run/ci/" + runID, "base_sha": sha1,
	})
	after := func(nodes ...string) *attractor.State {
		st := &attractor.State{RunID: runID, Completed: nodes, Outcomes: map[string]attractor.Outcome{}}
		for _, n := range nodes {
			st.Outcomes[n] = attractor.Outcome{Status: attractor.StatusSuccess}
		}
		if len(nodes) > 1 {
			st.Outcomes["test"] = attractor.Outcome{Status: attractor.StatusFail, FailureReason: "exit status 1"}
		}
		return st
	}
	first, second := after("build"), after("build", "test")
	var lines []string
	for i, r := range []struct {
		sha, at string
		d       attractor.StateDelta
	}{
		{sha1, "2025-01-02T03:04:04Z", attractor.DiffState(nil, first)},
		{sha2, "2025-01-02T03:04:10Z", attractor.DiffState(first, second)},
	} {
		b, _ := json.Marshal(map[string]any{"seq": i + 1, "sha": r.sha, "at": r.at, "delta": r.d})
		lines = append(lines, string(b))
	}
	// The line being appended as the page reads is left out.
	f.write("checkpoints.ndjson", strings.Join(lines, "\n")+"\n"+`{"seq":3,"sh`)
	v2, err := p.Load(runID)
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Nodes    []runpage.Node
		Commit   runpage.Commit
		Status   string
		Updated  string
		Problems []string
	}
	of := func(r *runpage.Run) view {
		return view{r.Nodes, r.Commit, r.Status, r.UpdatedAt.String(), r.Problems}
	}
	if diff := cmp.Diff(of(v2), of(v1)); diff != "" {
		t.Errorf("page of version 2 (-got +want version 1's):\n%s", diff)
	}
}
