package runner

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Re-run from the failure. A run that failed at a node can be run again
// from the checkpoint before that node instead of from the start: a new
// run (its own id, checks and run branch) whose run directory is a copy
// of the failed run's as it stood at that checkpoint: the same graph.dot,
// the checkpoint.json header (artifact policy snapshot, limits, pinned
// image), and the journal up to that checkpoint. PrepareResume then
// resumes it like a run interrupted there; nothing here runs anything.
//
// Kept: the worktree as the checkpoint commit has it (the commit itself is
// reused: the new run branch starts at it), the context, visit and retry
// counts, failure signatures, goal-gate results, restarts, the pipeline,
// policy, limits and image the failed run pinned. Not kept: what the failed
// node and the nodes after it did, files the checkpoint policy left out of
// the commit (build artifacts), the run's own HOME, /tmp and managed
// roots, the earlier nodes' stage directories and logs (they stay with
// the failed run).

// ErrNoFailure is a run that cannot be resumed from its failure: it did
// not fail at a node, or failed at its first checkpoint, before which
// there is nothing to resume from.
var ErrNoFailure = errors.New("no checkpoint before a failed node")

// Fork is what ForkFailed made.
type Fork struct {
	Checkpoint *Checkpoint
	// From is the failed run, and its run branch.
	From, FromBranch string
	// Failed is the node that failed; Resumed the checkpoint commit the
	// new run starts at, which the failed run made before it.
	Failed, Resumed string
	// History is what the failed run did up to that checkpoint, from its
	// journal: each node's visits, outcome and checkpoint commit, and the
	// transitions between them (no attempts or times: the journal has
	// none), for the new run's checks to show those nodes as done.
	History *History
	// Records are the journal the new run starts with, for a StateStore.
	Records []CheckpointRecord
}

// ForkFailed lays out to (empty or missing) as the run directory of run
// runID, on a run branch named like the failed run's, resuming the finished failed run in from at the
// checkpoint before its failed node: the last node whose checkpoint
// recorded a fail outcome. repoDir is the repository the new worktree
// belongs to (the failed run's checkpoint commits must be in it).
func ForkFailed(from string, to RunDir, runID, repoDir string) (*Fork, error) {
	cp, err := readHeader(from)
	if err != nil {
		return nil, err
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("run %s: checkpoint version %d cannot be resumed from its failure", cp.RunID, cp.Version)
	}
	recs, _, err := readJournal(from)
	if err != nil {
		return nil, err
	}
	k, failed := beforeFailure(recs)
	if k == 0 {
		return nil, fmt.Errorf("run %s: %w", cp.RunID, ErrNoFailure)
	}
	graph, err := safefile.ReadIn(from, filepath.Base(RunDir(from).Graph()), attractor.MaxSourceBytes)
	if err != nil {
		return nil, fmt.Errorf("read the failed run's graph.dot: %w", err)
	}
	kept := recs[:k]
	fromID, fromBranch := cp.RunID, cp.Branch
	cp.RunID, cp.Branch = runID, path.Join(path.Dir(cp.Branch), runID)
	cp.relocate(string(to), repoDir)
	cp.setRecords(kept)
	cp.State.RunID = runID
	if err := to.write(cp, graph, kept); err != nil {
		return nil, fmt.Errorf("lay out the resumed run: %w", err)
	}
	return &Fork{Checkpoint: cp, From: fromID, FromBranch: fromBranch, Failed: failed, Resumed: cp.CommitSHA,
		History: journalHistory(kept), Records: kept}, nil
}

// FailedRunBranch is the run branch of the finished run in dir, which a
// run resumed from its failure needs in its repository.
func FailedRunBranch(dir string) (string, error) {
	cp, err := readHeader(dir)
	if err != nil {
		return "", err
	}
	return cp.Branch, nil
}

// beforeFailure finds the last checkpoint whose node failed and returns
// how many records come before it, and the node; 0 when no node failed
// after a first checkpoint.
func beforeFailure(recs []CheckpointRecord) (int, string) {
	st := &attractor.State{}
	k, failed := 0, ""
	for i, r := range recs {
		st.Apply(r.Delta)
		node := st.CurrentNode
		if o, ok := st.Outcomes[node]; ok && node != "" && o.Status == attractor.StatusFail {
			k, failed = i, node
		}
	}
	return k, failed
}

// journalHistory is the history recs record: one visit per checkpoint.
func journalHistory(recs []CheckpointRecord) *History {
	h := &History{}
	index := map[string]int{}
	st := &attractor.State{}
	prev := ""
	for _, r := range recs {
		st.Apply(r.Delta)
		id := st.CurrentNode
		if id == "" {
			continue
		}
		i, ok := index[id]
		if !ok {
			i = len(h.Nodes)
			index[id] = i
			h.Nodes = append(h.Nodes, NodeHistory{ID: id})
		}
		n := &h.Nodes[i]
		n.Visits++
		n.CheckpointSHA = r.SHA
		n.Outcome = st.Outcomes[id]
		if prev != "" {
			h.Edges = append(h.Edges, EdgeHistory{From: prev, To: id})
		}
		prev = id
	}
	return h
}
