package runner

import (
	"github.com/kilroy-bot/kilroy-bot/runner/caches"

	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// PrepareResume readies an interrupted run to continue from its last
// checkpoint: the worktree is made again at the checkpoint commit, the
// pipeline is the graph.dot the run started with and the artifact policy
// is the snapshot in checkpoint.json, even if the repository changed
// since. Nodes the checkpoint records as done are not run again.
func PrepareResume(ctx context.Context, dir string, o LocalOptions) (*Prepared, error) {
	// Nodes run in the worktree, so the stage paths handed to them must
	// not be relative to the caller's working directory.
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: run directory: %w", ErrUsage, err)
	}
	cp, err := ReadCheckpoint(dir)
	if errors.Is(err, ErrNoCheckpoint) {
		return nil, fmt.Errorf("%w: %w: nothing to resume, start it again with `kilroy-bot run`", ErrUsage, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUsage, err)
	}
	if cp.State.Finished {
		return nil, fmt.Errorf("%w: run %s already finished; start a new one with `kilroy-bot run`", ErrUsage, cp.RunID)
	}
	rd := RunDir(dir)
	if err := rd.readyJournal(cp); err != nil {
		return nil, fmt.Errorf("resume %s: %w", cp.RunID, err)
	}
	src, err := safefile.ReadIn(dir, filepath.Base(rd.Graph()), attractor.MaxSourceBytes)
	if err != nil {
		return nil, fmt.Errorf("%w: read the run's graph.dot: %w", ErrUsage, err)
	}
	p, diags, err := attractor.Load(cp.GraphPath, src)
	if err != nil {
		return nil, &InvalidPipelineError{File: cp.GraphPath, Diagnostics: diags, Err: err}
	}
	// graph.dot holds the pipeline as written; the node timeout the run
	// started with comes from the config, recorded in checkpoint.json.
	applyLimits(p, cp.Limits)
	if err := (Answers{ByNode: o.Answers}).Check(p); err != nil {
		return nil, err
	}
	git, err := newGit(o.GitPath, o.Env, rd)
	if err != nil {
		return nil, err
	}
	prep := &Prepared{RunID: cp.RunID, Dir: rd, Pipeline: p, Name: cp.Pipeline, Branch: cp.Branch,
		BaseSHA: cp.BaseSHA, RepoDir: cp.RepoDir, Warnings: diags, git: git, policy: cp.Policy, cp: *cp,
		resumeFrom: cp.State, caches: resumeCaches(o, cp.RepoDir, rd)}
	if err := git.RemoveWorktree(ctx, cp.RepoDir, rd.Worktree()); err != nil {
		return nil, fmt.Errorf("resume %s: remove the old worktree: %w", cp.RunID, err)
	}
	if err := git.AddWorktree(ctx, cp.RepoDir, rd.Worktree(), cp.Branch, cp.CommitSHA); err != nil {
		return nil, fmt.Errorf("resume %s: %w", cp.RunID, err)
	}
	return prep, nil
}

// readyJournal makes the journal ready for the resumed run to append to,
// and checkpoint.json show the state it replays to: a torn last line is
// cut off, and a version 1 run directory (the whole state in
// checkpoint.json) becomes a journal of one record holding that state and
// a version 2 checkpoint.json. The journal is written first: a kill
// between the two leaves the version 1 file, which a later resume
// converts again. checkpoint.json is rewritten in either case, since a
// kill after a journal append and before the rewrite that follows it
// leaves the file one checkpoint behind.
func (d RunDir) readyJournal(cp *Checkpoint) error {
	if cp.Version != legacyCheckpointVersion {
		if err := os.Truncate(d.Journal(), cp.journalLen); err != nil {
			return fmt.Errorf("cut the torn end of %s: %w", journalName, err)
		}
		return d.writeCheckpoint(*cp)
	}
	rec := CheckpointRecord{Seq: 1, SHA: cp.CommitSHA, At: cp.UpdatedAt, Delta: attractor.DiffState(nil, cp.State)}
	b, err := encodeJournal([]CheckpointRecord{rec})
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(d.Journal(), b); err != nil {
		return fmt.Errorf("convert checkpoint.json version 1: %w", err)
	}
	cp.Seq = 1
	// The record round-trips the state as every later resume reads it.
	cp.State = replay([]CheckpointRecord{rec})
	return d.writeCheckpoint(*cp)
}

// resumeCaches is the cache directory a resumed run uses: the caller's,
// else a local run's repository's, as PrepareLocal chose it.
func resumeCaches(o LocalOptions, repo string, dir RunDir) string {
	if o.Env.Caches == "" && o.DataDir != "" {
		return caches.LocalDir(filepath.Join(o.DataDir, CachesDir), repo)
	}
	return runCaches(o.Env, dir)
}
