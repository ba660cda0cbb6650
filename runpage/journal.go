package runpage

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// journalRecord is a line of checkpoints.ndjson as runner's journal
// writes it (runner.CheckpointRecord): version 2 of checkpoint.json holds
// no state, the journal's records replay to it.
type journalRecord struct {
	Seq   int                  `json:"seq"`
	SHA   string               `json:"sha"`
	At    time.Time            `json:"at"`
	Delta attractor.StateDelta `json:"delta"`
}

// journal fills cp's state, commit and time from checkpoints.ndjson. A
// line being appended right now ends the replay; one cut off by the cap
// leaves the state out, since the records are deltas of each other.
func (b *builder) journal(cp *checkpointFile) {
	data, cut, err := tail(b.root, "checkpoints.ndjson", maxCheckpoint)
	switch {
	case notExist(err):
		return
	case err != nil:
		b.problem("checkpoints.ndjson: %v", err)
		return
	case cut > 0:
		b.problem("checkpoints.ndjson: larger than %d bytes, not shown", maxCheckpoint)
		return
	}
	st := &attractor.State{}
	n := 0
	for line := range bytes.Lines(data) {
		var rec journalRecord
		if json.Unmarshal(line, &rec) != nil || rec.Seq != n+1 {
			break
		}
		st.Apply(rec.Delta)
		cp.CommitSHA, cp.UpdatedAt, n = rec.SHA, rec.At, rec.Seq
	}
	if n > 0 {
		cp.State = st
	}
}
