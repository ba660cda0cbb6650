package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// The checkpoint journal. A run's resumable state is checkpoint.json's
// header (what it runs: pipeline, branch, base commit, policy snapshot,
// limits), plus checkpoints.ndjson, one line appended per checkpoint: the
// commit and what the node changed in the engine's state
// (attractor.StateDelta). Replaying the lines gives the state of the last
// checkpoint; checkpoint.json shows it too, for other tools, but resume
// reads the journal (checkpoint_file.go). A node's write is one append of its own
// changes, so it costs the same at node 200 as at node 10 (a whole state
// rewritten per node grew with the run: 14.5 KB at 50 nodes, 53 KB at 200).
//
// Durability, against a killed process (SIGKILL, a crash of the bot); no
// file is fsynced, so after an OS crash or power loss the journal may be
// behind the run branch as git's own unsynced refs may be, and resume
// repeats the nodes after what survived:
//   - killed before the checkpoint commit: the node runs again on resume;
//   - killed after the commit, before the line is appended: the journal
//     ends at the previous checkpoint, resume makes the worktree there
//     (the branch is reset to it) and the node runs again;
//   - killed while appending: the torn last line is ignored (and cut off
//     before the resumed run appends), the same as the case before;
//   - once the line is in the file, the checkpoint is resumable.
// The server also stores every line in the database (StateStore) after
// appending it, before the run branch is pushed, so any replica can
// resume from what the remote has.

// CheckpointRecord is one line of checkpoints.ndjson: the checkpoint
// number (from 1), its commit and the state delta since the one before.
type CheckpointRecord struct {
	Seq   int                  `json:"seq"`
	SHA   string               `json:"sha"`
	At    time.Time            `json:"at"`
	Delta attractor.StateDelta `json:"delta"`
}

// journalName is the journal's file name in the run directory.
const journalName = "checkpoints.ndjson"

// Journal is the path of the run's checkpoint journal.
func (d RunDir) Journal() string { return filepath.Join(string(d), journalName) }

// ErrNoCheckpoint is a run directory whose run made no checkpoint yet.
var ErrNoCheckpoint = errors.New("no checkpoint yet")

// journal appends a run's checkpoints; one goroutine (the engine's) uses it.
type journal struct {
	f   *os.File
	seq int // the last record's number
}

// openJournal opens the run's journal for appending after record seq.
func openJournal(d RunDir, seq int) (*journal, error) {
	root, err := os.OpenRoot(string(d))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", journalName, err)
	}
	defer root.Close()
	f, err := root.OpenFile(journalName, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", journalName, err)
	}
	return &journal{f: f, seq: seq}, nil
}

// append records the checkpoint at sha, whose state is the last record's
// changed by delta: one write of one line, so a kill tears at most that
// line.
func (j *journal) append(sha string, delta attractor.StateDelta) (CheckpointRecord, error) {
	rec := CheckpointRecord{Seq: j.seq + 1, SHA: sha, At: time.Now().UTC(), Delta: delta}
	b, err := json.Marshal(rec)
	if err != nil {
		return rec, fmt.Errorf("encode checkpoint %d: %w", rec.Seq, err)
	}
	if _, err := j.f.Write(append(b, '\n')); err != nil {
		return rec, fmt.Errorf("append checkpoint %d to %s: %w", rec.Seq, journalName, err)
	}
	j.seq = rec.Seq
	return rec, nil
}

func (j *journal) close() error { return j.f.Close() }

// readJournal reads the run's checkpoint records and the length of the
// file they fill: a torn last line (the kill of an append) is left out
// of both. A damaged line before the last is an error.
func readJournal(dir string) (recs []CheckpointRecord, valid int64, err error) {
	data, err := safefile.ReadIn(dir, journalName, maxProgressBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", journalName, err)
	}
	return parseJournal(data)
}

func parseJournal(data []byte) (recs []CheckpointRecord, valid int64, err error) {
	line := 0
	for len(data) > 0 {
		line++
		i := bytes.IndexByte(data, '\n')
		var rec CheckpointRecord
		if i < 0 || json.Unmarshal(data[:i], &rec) != nil {
			if i < 0 || len(bytes.TrimSpace(data[i+1:])) == 0 {
				return recs, valid, nil // torn by a kill mid-append
			}
			return nil, 0, fmt.Errorf("%s:%d: not a checkpoint record; the run directory is damaged, start a new run", journalName, line)
		}
		if rec.Seq != len(recs)+1 {
			return nil, 0, fmt.Errorf("%s:%d: checkpoint %d where %d belongs; the run directory is damaged, start a new run", journalName, line, rec.Seq, len(recs)+1)
		}
		recs = append(recs, rec)
		valid += int64(i + 1)
		data = data[i+1:]
	}
	return recs, valid, nil
}

// replay is the state after the records, applied in order to an empty
// state.
func replay(recs []CheckpointRecord) *attractor.State {
	st := &attractor.State{}
	for _, r := range recs {
		st.Apply(r.Delta)
	}
	return st
}

// encodeJournal is the journal file holding recs.
func encodeJournal(recs []CheckpointRecord) ([]byte, error) {
	var b bytes.Buffer
	for _, r := range recs {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode checkpoint %d: %w", r.Seq, err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
