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

// Checkpoint is checkpoint.json: everything resume needs, written
// atomically after every checkpoint commit.
type Checkpoint struct {
	Version    int              `json:"version"`
	RunID      string           `json:"run_id"`
	Pipeline   string           `json:"pipeline"`
	GraphPath  string           `json:"graph_path"` // repository-relative .dot the run executed
	RepoDir    string           `json:"repo_dir"`   // repository the worktree belongs to
	Branch     string           `json:"branch"`
	BaseSHA    string           `json:"base_sha"`
	CommitSHA  string           `json:"commit_sha"` // last checkpoint commit
	UpdatedAt  time.Time        `json:"updated_at"`
	State      *attractor.State `json:"state"`
	Policy     *policy.Resolved `json:"artifact_policy"`
	PolicyHash string           `json:"artifact_policy_sha256"`
	// Limits are the config's limits when the run started; resume applies
	// them again, since it reads no config (like the policy snapshot).
	Limits policy.Limits `json:"limits"`
}

const checkpointVersion = 1

// Caps on the run directory's files read back: the run wrote them, but its
// nodes could have replaced them.
const (
	maxCheckpointBytes = 64 << 20
	maxProgressBytes   = 256 << 20
)

// writeCheckpoint replaces checkpoint.json atomically: a reader sees the
// old file or the new one, never a torn write.
func (d RunDir) writeCheckpoint(cp *Checkpoint) error {
	b, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	// Replaced, not fsynced: the durability promised is against a killed
	// process (SIGKILL, a crash of the bot), which leaves the page cache to
	// the kernel. After an OS crash or power loss the file may be one
	// checkpoint behind the run branch, as git's own unsynced refs may be,
	// and resume repeats the nodes after it. An fsync per node cost about
	// 0.4 of git's own per-commit time (bench/chain).
	return safefile.WriteFile(d.Checkpoint(), append(b, '\n'))
}

// ReadCheckpoint loads a run's checkpoint.json and checks its policy
// snapshot against the recorded hash.
func ReadCheckpoint(dir string) (*Checkpoint, error) {
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
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d, this kilroy-bot reads version %d", path, cp.Version, checkpointVersion)
	}
	if cp.State == nil {
		return nil, fmt.Errorf("%s: checkpoint has no run state", path)
	}
	if err := policy.CheckSnapshot(cp.Policy, cp.PolicyHash); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &cp, nil
}
