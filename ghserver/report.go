package ghserver

import (
	"os"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"github.com/kilroy-bot/kilroy-bot/checks"
	"github.com/kilroy-bot/kilroy-bot/runner"
)

// writeReport replaces a run directory's report.md with the local report
// of v (the summary check's Markdown and every verify check), atomically,
// so that the run page never reads half a file. A run directory that does
// not exist is left alone: the run has not started, or was cleared.
func writeReport(runDir string, v *checks.RunView, opts checks.RenderOptions) error {
	if _, err := os.Stat(runDir); err != nil {
		return nil
	}
	return safefile.WriteFile(filepath.Join(runDir, "report.md"), []byte(checks.LocalReport(v, opts)))
}

// Prior hands the checks what the runner read of an interrupted run: what
// a resumed run's reporter, and `kilroy-bot run`'s recorder, are seeded
// with.
func Prior(h *runner.History) checks.Prior {
	var p checks.Prior
	for _, n := range h.Nodes {
		p.Nodes = append(p.Nodes, checks.PriorNode{ID: n.ID, Visits: n.Visits, Attempts: n.Attempts,
			Duration: n.Duration, Outcome: n.Outcome, CheckpointSHA: n.CheckpointSHA, Dir: n.Dir, Usage: n.Usage})
	}
	for _, e := range h.Edges {
		p.Edges = append(p.Edges, checks.PriorEdge{From: e.From, To: e.To, Method: e.Method})
	}
	return p
}
