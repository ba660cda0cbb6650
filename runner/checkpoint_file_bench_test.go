package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// BenchmarkCheckpointFile measures what a checkpoint costs the run
// directory at node 10 and at node 200 of a chain of tool nodes, each
// printing a line of output: the rewrite of checkpoint.json (encode the
// whole state, write a temporary file, rename it), which grows with the
// run, and its encoding alone, against the journal's append, which does
// not. The states are the
// engine's own, from a run with a host that starts no process.
//
//	go test -run '^$' -bench CheckpointFile -benchtime 200x ./runner/
//
// On the shared 2-core machine it was written on: the file is 4.6 KB at
// node 10 and 70 KB at node 200; encoding it takes 43 µs and 1.1-1.6 ms,
// the whole rewrite 1-3 ms and 1.5-3.6 ms (the temporary file's creation
// and rename dominate and vary run to run); the journal's line is 0.73 KB
// and 7-18 µs at both.
func BenchmarkCheckpointFile(b *testing.B) {
	states := chainStates(b, 200)
	for _, n := range []int{10, 200} {
		cp := Checkpoint{Version: checkpointVersion, RunID: "bench", Pipeline: "chain", Branch: "kilroy/run/chain/bench",
			BaseSHA: strings.Repeat("b", 40), State: states[n-1].state, CommitSHA: states[n-1].sha, Seq: n}
		b.Run(fmt.Sprintf("node=%d/checkpoint.json", n), func(b *testing.B) {
			dir := RunDir(b.TempDir())
			for b.Loop() {
				if err := dir.writeCheckpoint(cp); err != nil {
					b.Fatal(err)
				}
			}
			st, err := os.Stat(dir.Checkpoint())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Size()), "file-bytes")
		})
		b.Run(fmt.Sprintf("node=%d/encode", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := encodeCheckpoint(cp); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("node=%d/journal", n), func(b *testing.B) {
			dir := RunDir(b.TempDir())
			j, err := openJournal(dir, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer j.close()
			for b.Loop() {
				if _, err := j.append(states[n-1].sha, states[n-1].delta); err != nil {
					b.Fatal(err)
				}
			}
			st, err := os.Stat(dir.Journal())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.Size())/float64(j.seq), "line-bytes")
		})
	}
}

// checkpointAt is the engine's state and delta at one checkpoint.
type checkpointAt struct {
	state *attractor.State
	delta attractor.StateDelta
	sha   string
}

// chainStates runs a chain of n tool nodes with a host that starts no
// process and returns the state at each node's checkpoint, start's left
// out.
func chainStates(b *testing.B, n int) []checkpointAt {
	b.Helper()
	var src strings.Builder
	src.WriteString("digraph chain {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n")
	ids := []string{"start"}
	for i := range n {
		id := fmt.Sprintf("step_%03d", i)
		fmt.Fprintf(&src, "%s [shape=parallelogram, tool_command=\"go test ./pkg/%d/...\"]\n", id, i)
		ids = append(ids, id)
	}
	src.WriteString(strings.Join(append(ids, "done"), " -> ") + "\n}\n")
	p, _, err := attractor.Load("chain.dot", []byte(src.String()))
	if err != nil {
		b.Fatal(err)
	}
	h := &recordingHost{}
	res, err := attractor.Run(context.Background(), p, attractor.RunConfig{RunID: "bench", Workspace: b.TempDir(), RunDir: b.TempDir(), Host: h})
	if err != nil || res.Status != attractor.StatusSuccess {
		b.Fatalf("run: %v %+v", err, res)
	}
	return h.at[1:]
}

// recordingHost runs no process (every one succeeds with a line of
// output) and keeps the state at every checkpoint.
type recordingHost struct {
	at []checkpointAt
}

func (h *recordingHost) Exec(_ context.Context, req attractor.ExecRequest) (attractor.ExecResult, error) {
	out := fmt.Sprintf("ok  \texample.com/pkg/%s\t0.%03ds\n", req.StageEnv[attractor.EnvNodeID], len(h.at))
	for _, path := range []string{req.StdoutPath, req.StderrPath} {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			return attractor.ExecResult{ExitCode: -1}, err
		}
	}
	return attractor.ExecResult{StdoutTail: out}, nil
}

func (h *recordingHost) Checkpoint(_ context.Context, req attractor.CheckpointRequest) (string, error) {
	sha := fmt.Sprintf("%040x", len(h.at)+1)
	h.at = append(h.at, checkpointAt{state: req.State(), delta: req.Delta, sha: sha})
	return sha, nil
}
