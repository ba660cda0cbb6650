package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
	"github.com/kilroy-bot/kilroy-bot/policy"
)

// RunDir is the layout of one run's directory.
type RunDir string

func (d RunDir) Worktree() string   { return filepath.Join(string(d), "worktree") }
func (d RunDir) Checkpoint() string { return filepath.Join(string(d), "checkpoint.json") }
func (d RunDir) Graph() string      { return filepath.Join(string(d), "graph.dot") }
func (d RunDir) Progress() string   { return filepath.Join(string(d), "progress.ndjson") }
func (d RunDir) Report() string     { return filepath.Join(string(d), "report.md") }
func (d RunDir) Nodes() string      { return filepath.Join(string(d), "nodes") }
func (d RunDir) GitHome() string    { return filepath.Join(string(d), "home") }

// clear removes what a refused run created: the whole directory if it did
// not exist before, else its entries (runDirFor checked it was empty).
func (d RunDir) clear(existed bool) {
	if !existed {
		_ = os.RemoveAll(string(d))
		return
	}
	entries, _ := os.ReadDir(string(d))
	for _, e := range entries {
		_ = os.RemoveAll(filepath.Join(string(d), e.Name()))
	}
}

// Checkpoint is what resume needs: checkpoint.json's header, and the state
// of the last checkpoint, replayed from checkpoints.ndjson (journal.go).
// checkpoint.json also shows that state (checkpoint_file.go), but only as
// a view for other tools: resume replays the journal. A version 1
// checkpoint.json, written by earlier kilroy-bots, held the state in its
// own "state" object and had no journal.
type Checkpoint struct {
	Version   int    `json:"version"`
	RunID     string `json:"run_id"`
	Pipeline  string `json:"pipeline"`
	GraphPath string `json:"graph_path"` // repository-relative .dot the run executed
	RepoDir   string `json:"repo_dir"`   // repository the worktree belongs to
	// RunDir is the run directory the policy snapshot's paths point into,
	// so a run directory rebuilt elsewhere can move them.
	RunDir    string    `json:"run_dir,omitempty"`
	Branch    string    `json:"branch"`
	BaseSHA   string    `json:"base_sha"`
	CommitSHA string    `json:"commit_sha,omitempty"` // last checkpoint commit
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	// State is the run state at CommitSHA; in checkpoint.json only in
	// version 1.
	State      *attractor.State `json:"state,omitempty"`
	Policy     *policy.Resolved `json:"artifact_policy"`
	PolicyHash string           `json:"artifact_policy_sha256"`
	// Limits are the config's limits when the run started; resume applies
	// them again, since it reads no config (like the policy snapshot).
	Limits policy.Limits `json:"limits"`
	// Image is the image the run's nodes run in, pinned at its start; nil:
	// the host jail.
	Image *RunImage `json:"image,omitempty"`
	// Usage is what the run's coding agents used so far, every attempt
	// counted; a resume goes on from it.
	Usage *attractor.UsageTotal `json:"usage,omitempty"`

	// Seq is the number of the last checkpoint; journalLen the bytes of
	// checkpoints.ndjson its records fill (a torn line after them is cut
	// off before the resumed run appends).
	Seq        int `json:"-"`
	journalLen int64
}

// Checkpoint versions: 1 carried the whole state and was rewritten after
// every node; in 2 the state resume reads is in the journal, and
// checkpoint.json's state fields (in the spec's shape) are a view of it.
const (
	legacyCheckpointVersion = 1
	checkpointVersion       = 2
)

// Caps on the run directory's files read back: the run wrote them, but its
// nodes could have replaced them.
const (
	maxCheckpointBytes = 64 << 20
	maxProgressBytes   = 256 << 20
)

// ReadCheckpoint loads a run's checkpoint: checkpoint.json, its policy
// snapshot checked against the recorded hash, and the state of the last
// checkpoint. A run without a checkpoint yet is ErrNoCheckpoint.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
	cp, err := readHeader(dir)
	if err != nil {
		return nil, err
	}
	if cp.Version == legacyCheckpointVersion {
		if cp.State == nil {
			return nil, fmt.Errorf("%s: checkpoint has no run state", RunDir(dir).Checkpoint())
		}
		return cp, nil
	}
	recs, valid, err := readJournal(dir)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: run %s was interrupted before its first checkpoint: %w", dir, cp.RunID, ErrNoCheckpoint)
	}
	cp.setRecords(recs)
	cp.journalLen = valid
	return cp, nil
}

// setRecords makes cp the checkpoint the last of recs took.
func (cp *Checkpoint) setRecords(recs []CheckpointRecord) {
	last := recs[len(recs)-1]
	cp.State, cp.CommitSHA, cp.UpdatedAt, cp.Seq = replay(recs), last.SHA, last.At, last.Seq
}

// readHeader reads and checks checkpoint.json.
func readHeader(dir string) (*Checkpoint, error) {
	path := RunDir(dir).Checkpoint()
	// Nodes can reach the run directory: a link or a FIFO left in place of
	// checkpoint.json must not take the resuming server down.
	b, err := safefile.ReadIn(dir, filepath.Base(path), maxCheckpointBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no checkpoint.json: is %s a kilroy-bot run directory?", path, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	var cp Checkpoint
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("%s: not a valid checkpoint: %w", path, err)
	}
	if cp.Version != checkpointVersion && cp.Version != legacyCheckpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d, this kilroy-bot reads versions %d and %d", path, cp.Version, legacyCheckpointVersion, checkpointVersion)
	}
	if err := policy.CheckSnapshot(cp.Policy, cp.PolicyHash); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &cp, nil
}
