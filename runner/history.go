package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// History is what an interrupted run did up to the checkpoint it resumes
// from, read back from its run directory. The engine of the resumed run
// reports only the nodes it runs from there on, so whoever reports the run
// takes the earlier nodes' attempts, durations and checkpoints from here.
type History struct {
	Nodes []NodeHistory // in the order they first started
	Edges []EdgeHistory // the transitions taken, in order
}

// NodeHistory is one node as it stood at the checkpoint.
type NodeHistory struct {
	ID       string
	Visits   int
	Attempts int           // all attempts of all visits
	Duration time.Duration // summed over attempts
	// Outcome is the last visit's outcome: checkpoint.json's, which keeps
	// what progress.ndjson leaves out (findings, notes), when it has the
	// node, else the status, failure class and reason progress.ndjson has.
	Outcome       attractor.Outcome
	CheckpointSHA string
	Dir           string // stage directory; "" when not found
	// Usage sums the agent usage of its attempts.
	Usage attractor.UsageTotal
}

// EdgeHistory is one transition the run took.
type EdgeHistory struct {
	From, To string
	Method   attractor.EdgeMethod
}

// ReadHistory reads the history of the interrupted run in dir. Call it
// before the run resumes: the resumed run appends to progress.ndjson.
func ReadHistory(dir string) (*History, error) {
	cp, err := ReadCheckpoint(dir)
	if err != nil {
		return nil, err
	}
	return readHistory(RunDir(dir), cp.State)
}

// readHistory replays progress.ndjson into per-node records, keeping only
// the work st (the checkpoint resumed from) covers.
func readHistory(d RunDir, st *attractor.State) (*History, error) {
	data, err := safefile.ReadIn(string(d), filepath.Base(d.Progress()), maxProgressBytes)
	if err != nil {
		return nil, fmt.Errorf("read the run's history: %w", err)
	}
	var events []event
	for line := range bytes.Lines(data) {
		var ev event
		if json.Unmarshal(line, &ev) != nil {
			// The crash that interrupted the run may have torn the last
			// line; a line that does not decode tells nothing.
			continue
		}
		events = append(events, ev)
	}
	h := &History{}
	index := map[string]int{}
	node := func(id string) *NodeHistory {
		i, ok := index[id]
		if !ok {
			i = len(h.Nodes)
			index[id] = i
			h.Nodes = append(h.Nodes, NodeHistory{ID: id, Dir: stageDir(d, id)})
		}
		return &h.Nodes[i]
	}
	for _, ev := range checkpointed(events) {
		switch ev.Type {
		case "node_started":
			node(ev.Node).Visits++
		case "attempt_finished", "node_finished":
			n := node(ev.Node)
			n.Attempts++
			n.Duration += time.Duration(ev.DurationMS) * time.Millisecond
			if ev.Usage != nil {
				n.Usage.Add(*ev.Usage)
			}
			if ev.Type == "node_finished" {
				n.Outcome = attractor.Outcome{Status: attractor.Status(ev.Status),
					FailureClass: attractor.FailureClass(ev.FailureClass), FailureReason: ev.Reason}
			}
		case "checkpoint":
			node(ev.Node).CheckpointSHA = ev.SHA
		case "edge_selected":
			h.Edges = append(h.Edges, EdgeHistory{From: ev.From, To: ev.To, Method: attractor.EdgeMethod(ev.Method)})
		}
	}
	for i := range h.Nodes {
		n := &h.Nodes[i]
		// The state has the latest outcome of the run's own nodes, not of
		// a parallel node's branches; the status must agree, or it is not
		// the visit recorded here.
		if o, ok := st.Outcomes[n.ID]; ok && o.Status == n.Outcome.Status {
			n.Outcome = o
		}
	}
	return h, nil
}

// checkpointed keeps the events of the work a resume does not do again.
// progress.ndjson holds every execution of the run, each beginning with
// run_started; an execution's work counts up to its last checkpoint of a
// node of the run itself (the next execution resumed from there), plus
// the transition that followed. What came after was done again, or is
// about to be. A checkpoint made while a node is still open is a parallel
// branch's, which the resume runs again with its parallel node.
func checkpointed(events []event) []event {
	var kept []event
	start := 0
	flush := func(end int) {
		exec := events[start:end]
		cut, open := 0, 0
		for i, ev := range exec {
			switch ev.Type {
			case "node_started":
				open++
			case "node_finished":
				open--
			case "checkpoint":
				if open == 0 {
					cut = i + 1
					for cut < len(exec) && exec[cut].Type == "edge_selected" && exec[cut].From == ev.Node {
						cut++
					}
				}
			}
		}
		kept = append(kept, exec[:cut]...)
	}
	for i, ev := range events {
		if ev.Type == "run_started" && i > start {
			flush(i)
			start = i
		}
	}
	flush(len(events))
	return kept
}

// stageDir is the stage directory the engine gave node id, if it is
// there. Stage directories are named after the node; an ID that is no
// plain file name gets another name, which the report can do without.
func stageDir(d RunDir, id string) string {
	if id == "" || id == "." || id == ".." || filepath.Base(id) != id {
		return ""
	}
	dir := filepath.Join(d.Nodes(), id)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return ""
	}
	return dir
}
