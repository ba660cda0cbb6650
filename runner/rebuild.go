package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// Stored is a run's resumable state as a StateStore keeps it: the run's
// checkpoint.json and graph.dot, and its journal lines in order.
type Stored struct {
	Header, Graph []byte
	Records       [][]byte
}

// ErrNothingToResume is a stored state that resumes nothing: no
// checkpoint recorded, or none of those recorded on the remote's run
// branch. The run starts over.
var ErrNothingToResume = errors.New("no stored checkpoint on the remote run branch")

// RebuildRunDir makes dir, empty or missing, the run directory of a run
// that another process started and was interrupted, from the state it
// stored and its run branch as the remote has it: the branch is fetched
// into mirror (this process's clone of cloneURL), and the run resumes
// from the last stored checkpoint whose commit the branch holds. That is
// the last checkpoint unless its push had not reached the remote; then it
// is the last one pushed. The policy snapshot's paths into the old run
// directory are moved into dir. PrepareResume takes it from there.
func RebuildRunDir(ctx context.Context, git *gitops.Git, dir RunDir, mirror, cloneURL string, st Stored) (*Checkpoint, error) {
	var cp Checkpoint
	if err := json.Unmarshal(st.Header, &cp); err != nil {
		return nil, fmt.Errorf("stored checkpoint.json: %w", err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("stored checkpoint.json has version %d, want %d", cp.Version, checkpointVersion)
	}
	if err := policy.CheckSnapshot(cp.Policy, cp.PolicyHash); err != nil {
		return nil, fmt.Errorf("stored checkpoint.json: %w", err)
	}
	recs, _, err := parseJournal(append(joinLines(st.Records), '\n'))
	if err != nil {
		return nil, fmt.Errorf("stored checkpoints: %w", err)
	}
	if err := git.Fetch(ctx, mirror, cloneURL, "+refs/heads/"+cp.Branch+":refs/heads/"+cp.Branch); err != nil {
		return nil, fmt.Errorf("fetch run branch %s: %w: %w", cp.Branch, ErrNothingToResume, err)
	}
	tip, err := git.BranchTip(ctx, mirror, cp.Branch)
	if err != nil {
		return nil, err
	}
	held, err := git.Reachable(ctx, mirror, tip)
	if err != nil {
		return nil, err
	}
	n := len(recs)
	for n > 0 && !held[recs[n-1].SHA] {
		n--
	}
	if n == 0 {
		return nil, ErrNothingToResume
	}
	cp.relocate(string(dir), mirror)
	cp.setRecords(recs[:n])
	if err := dir.write(&cp, st.Graph, recs[:n]); err != nil {
		return nil, fmt.Errorf("rebuild run directory: %w", err)
	}
	return &cp, nil
}

func joinLines(lines [][]byte) []byte {
	var b []byte
	for i, l := range lines {
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, l...)
	}
	return b
}

// relocate points cp at this process's run directory and repository: the
// policy snapshot's paths into the old run directory (managed roots and
// the environment naming them) move along, and its hash is taken again.
func (cp *Checkpoint) relocate(runDir, repoDir string) {
	old := cp.RunDir
	move := func(v string) string {
		if old == "" || (v != old && !strings.HasPrefix(v, old+string(os.PathSeparator))) {
			return v
		}
		return runDir + strings.TrimPrefix(v, old)
	}
	for k, v := range cp.Policy.Env {
		cp.Policy.Env[k] = move(v)
	}
	for k, v := range cp.Policy.ManagedRoots {
		cp.Policy.ManagedRoots[k] = move(v)
	}
	cp.PolicyHash = cp.Policy.Hash()
	cp.RunDir, cp.RepoDir = runDir, repoDir
}

// write lays out a run directory to resume from: graph.dot, the journal
// of recs, and checkpoint.json (cp, at the last of recs) last, which
// makes it a run directory.
func (d RunDir) write(cp *Checkpoint, graph []byte, recs []CheckpointRecord) error {
	if err := os.MkdirAll(d.Nodes(), 0o755); err != nil {
		return err
	}
	if err := safefile.WriteFile(d.Graph(), graph); err != nil {
		return err
	}
	b, err := encodeJournal(recs)
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(d.Journal(), b); err != nil {
		return err
	}
	return d.writeCheckpoint(*cp)
}
