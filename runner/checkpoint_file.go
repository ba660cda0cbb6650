package runner

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// checkpoint.json is the run's current state in the shape the Attractor
// spec (§5.3) gives it and Kilroy writes it, for the tools written for
// them (`jq .completed_nodes checkpoint.json`), beside what the run runs
// (the header: pipeline, branch, base commit, policy snapshot, limits).
// It is a view: the journal (checkpoints.ndjson) is what resume replays,
// and the view is rewritten from the replayed state after every
// checkpoint, when a run starts, and when resume or a rebuild readies a
// run directory, so that it agrees with the journal's last record. Its
// write is a whole file (temporary file and rename, no fsync), which grows
// with the run; the journal's append and the commit do not
// (BenchmarkCheckpointFile).

// specState is checkpoint.json's state fields.
type specState struct {
	// Timestamp is when the last checkpoint was taken (the journal
	// record's time); before the first, when the file was written.
	Timestamp   time.Time `json:"timestamp"`
	CurrentNode string    `json:"current_node"`
	// CompletedNodes lists executed nodes in order, repeats included.
	CompletedNodes []string                     `json:"completed_nodes"`
	NodeRetries    map[string]int               `json:"node_retries"`
	NodeOutcomes   map[string]attractor.Outcome `json:"node_outcomes"`
	Context        map[string]any               `json:"context"`
	// GitCommitSHA is the last checkpoint commit; "" before the first.
	GitCommitSHA string `json:"git_commit_sha"`
	// Logs is the spec's run log, which the engine does not keep (its
	// logs are progress.ndjson and the stage directories): always empty.
	Logs []string `json:"logs"`
	// NextNode is where a resume continues; "" once the run finished.
	NextNode string `json:"next_node"`
	Finished bool   `json:"finished"`
	// CheckpointSeq is the journal record the state is that of; 0 before
	// the first checkpoint.
	CheckpointSeq int `json:"checkpoint_seq"`
}

// checkpointFile is checkpoint.json: the state, then the header.
type checkpointFile struct {
	specState
	Checkpoint
}

// header is cp as checkpoint.json's header holds it: the state, the last
// commit and its time are in the state fields (or, for a version 1 file,
// were in the state object), never in the header.
func (cp Checkpoint) header() Checkpoint {
	cp.Version, cp.State, cp.CommitSHA, cp.UpdatedAt = checkpointVersion, nil, "", time.Time{}
	return cp
}

// encodeHeader is the header alone, as the store keeps it.
func encodeHeader(cp Checkpoint) ([]byte, error) {
	b, err := json.MarshalIndent(cp.header(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return append(b, '\n'), nil
}

// viewOf is the state fields of checkpoint cp: its State (nil before the
// first checkpoint), commit, time and journal record number.
func viewOf(cp Checkpoint, now time.Time) specState {
	v := specState{
		Timestamp: now.UTC(), CompletedNodes: []string{}, NodeRetries: map[string]int{},
		NodeOutcomes: map[string]attractor.Outcome{}, Context: map[string]any{}, Logs: []string{},
	}
	st := cp.State
	if st == nil || cp.Seq == 0 {
		return v
	}
	v.Timestamp, v.GitCommitSHA, v.CheckpointSeq = cp.UpdatedAt.UTC(), cp.CommitSHA, cp.Seq
	v.CurrentNode, v.NextNode, v.Finished = st.CurrentNode, st.NextNode, st.Finished
	if st.Completed != nil {
		v.CompletedNodes = st.Completed
	}
	if st.Retries != nil {
		v.NodeRetries = st.Retries
	}
	if st.Outcomes != nil {
		v.NodeOutcomes = st.Outcomes
	}
	if st.Context != nil {
		v.Context = st.Context
	}
	return v
}

// writeCheckpoint replaces checkpoint.json with the header of cp and the
// state of its checkpoint (cp.State at cp.Seq, cp.CommitSHA), atomically:
// a reader sees the old file or the new one, never a torn write.
func (d RunDir) writeCheckpoint(cp Checkpoint) error {
	b, err := encodeCheckpoint(cp)
	if err != nil {
		return err
	}
	return safefile.WriteFile(d.Checkpoint(), b)
}

// encodeCheckpoint is checkpoint.json's content for cp.
func encodeCheckpoint(cp Checkpoint) ([]byte, error) {
	f := checkpointFile{specState: viewOf(cp, time.Now()), Checkpoint: cp.header()}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode checkpoint: %w", err)
	}
	return append(b, '\n'), nil
}
