package attractor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// stageFiles is the writing of one attempt's own stage files (status.json
// and invocation.json, then the host's scrub of the stage directory). The
// files are encoded when the attempt ends and written on a goroutine of
// their own, so that for a node's last attempt the disk work overlaps the
// checkpoint (git's processes run meanwhile); the attempt is announced to
// listeners only once they are written (attemptEnd), so no reader races
// the write. The stage's processes have all ended by then.
type stageFiles struct {
	done chan error
}

// startStageFiles encodes the attempt's files on the caller's goroutine
// (the outcome is not touched after) and starts writing them.
func (r *run) startStageFiles(ctx context.Context, s *Stage, o Outcome) *stageFiles {
	sf := &stageFiles{done: make(chan error, 1)}
	status, err := encodeJSON("status.json", o)
	var inv []byte
	if err == nil {
		inv, err = encodeJSON("invocation.json", s.invocation())
	}
	if err != nil {
		sf.done <- fmt.Errorf("node %s: %w", s.Node.ID, err)
		return sf
	}
	scrub, _ := r.cfg.Host.(StageScrubber)
	go func() {
		err := safefile.WriteFile(filepath.Join(s.Dir, "status.json"), status)
		if err == nil {
			err = safefile.WriteFile(filepath.Join(s.Dir, "invocation.json"), inv)
		}
		if scrub != nil {
			scrub.ScrubStage(ctx, s.Dir)
		}
		if err != nil {
			err = fmt.Errorf("node %s: %w", s.Node.ID, err)
		}
		sf.done <- err
	}()
	return sf
}

// wait returns once the files are written (and scrubbed).
func (sf *stageFiles) wait() error { return <-sf.done }

// encodeJSON is a stage file's content: v indented. Stage files are
// replaced, not written through (safefile.WriteFile): the stage's process
// may have left a link or a FIFO at the path (status.json is its status
// path). A crash before the write only leaves a stage that resume runs
// again, or one without these two files if its checkpoint was made.
func encodeJSON(name string, v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	return append(b, '\n'), nil
}

// attemptEnd is the end of a node's last attempt, still to be announced:
// its stage files being written and the AttemptFinished event.
type attemptEnd struct {
	r     *run
	files *stageFiles
	ev    AttemptFinished
	done  bool
	err   error
}

// finish waits for the stage files and tells the listeners, once; the
// error says the files could not be written. A nil attemptEnd has nothing
// to announce.
func (e *attemptEnd) finish(ctx context.Context) error {
	if e == nil {
		return nil
	}
	if !e.done {
		e.done = true
		e.err = e.files.wait()
		e.r.report(ctx, "attempt finished", e.r.lis.AttemptFinished(ctx, e.ev))
	}
	return e.err
}

// stageFilesStop is the run stop for stage files that could not be
// written: the disk is full or the run directory broken, so nothing after
// would fare better.
func stageFilesStop(n *Node, err error) error {
	return stop(n.ID, ClassTransientInfra,
		"could not write the stage files of node %s: %v; check that the run directory's disk has room and is writable, and that nothing else writes into the stage directory, then run it again", n.ID, err)
}

// doneStageFiles stands for an attempt that has no stage files to write
// (its stage directory could not be prepared).
func doneStageFiles() *stageFiles {
	sf := &stageFiles{done: make(chan error, 1)}
	sf.done <- nil
	return sf
}
