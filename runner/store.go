package runner

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// StateStore keeps runs' resumable state where every replica reads it
// (the server's database), beside the run directory, which only the
// replica that ran it has. Its calls never fail a run: a store that could
// not write logs it and tries again with the next call, and a run whose
// state did not reach it resumes from what did, or starts over.
type StateStore interface {
	// RunStarted records what the run runs: the header of its
	// checkpoint.json and its graph.dot, once per execution.
	RunStarted(ctx context.Context, runID string, header, graph []byte)
	// Checkpointed records one checkpoint, after the run directory's
	// journal has it and before the run branch is pushed.
	Checkpointed(ctx context.Context, runID string, rec CheckpointRecord)
}

// storeStart hands the store the header of the run's checkpoint.json
// (the state is in the records) and its graph.dot.
func (p *Prepared) storeStart(ctx context.Context) error {
	header, err := encodeHeader(p.cp)
	if err != nil {
		return err
	}
	graph, err := safefile.ReadIn(string(p.Dir), filepath.Base(p.Dir.Graph()), attractor.MaxSourceBytes)
	if err != nil {
		return fmt.Errorf("read graph.dot back: %w", err)
	}
	p.store.RunStarted(ctx, p.RunID, header, graph)
	return nil
}
