package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/internal/gittest"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// specCheckpoint is checkpoint.json as a tool written for the Attractor
// spec or for Kilroy reads it, decoded without runner's types.
type specCheckpoint struct {
	Timestamp      time.Time      `json:"timestamp"`
	CurrentNode    string         `json:"current_node"`
	CompletedNodes []string       `json:"completed_nodes"`
	NodeRetries    map[string]int `json:"node_retries"`
	NodeOutcomes   map[string]any `json:"node_outcomes"`
	Context        map[string]any `json:"context"`
	GitCommitSHA   string         `json:"git_commit_sha"`
	Logs           []string       `json:"logs"`
	NextNode       string         `json:"next_node"`
	CheckpointSeq  int            `json:"checkpoint_seq"`
	// Some of the run metadata.
	RunID      string `json:"run_id"`
	Pipeline   string `json:"pipeline"`
	BaseSHA    string `json:"base_sha"`
	PolicyHash string `json:"artifact_policy_sha256"`
}

func readSpecCheckpoint(t testing.TB, dir RunDir) specCheckpoint {
	t.Helper()
	var cp specCheckpoint
	if err := json.Unmarshal([]byte(readFile(t, dir.Checkpoint())), &cp); err != nil {
		t.Fatalf("checkpoint.json: %v", err)
	}
	return cp
}

// stateView is the engine's state as checkpoint.json must show it: the
// values after the JSON round trip every reader of the file goes through.
func stateView(t testing.TB, st *attractor.State) specCheckpoint {
	t.Helper()
	var v specCheckpoint
	roundTrip(t, st.Outcomes, &v.NodeOutcomes)
	roundTrip(t, st.Context, &v.Context)
	v.CurrentNode, v.NextNode, v.CompletedNodes, v.NodeRetries = st.CurrentNode, st.NextNode, st.Completed, st.Retries
	return v
}

func roundTrip(t testing.TB, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

// stateFields are the fields of checkpoint.json that hold the state.
func stateFields(cp specCheckpoint) specCheckpoint {
	return specCheckpoint{CurrentNode: cp.CurrentNode, NextNode: cp.NextNode, CompletedNodes: cp.CompletedNodes,
		NodeRetries: cp.NodeRetries, NodeOutcomes: cp.NodeOutcomes, Context: cp.Context}
}

// checkpointPipeline: a tool node that asks for a retry through its
// status file the first time (the engine counts it in node_retries until
// the node succeeds), and sets a context key through it the second, then
// a verify node.
func checkpointPipeline() string {
	build := `echo built > built.txt; if [ -e .tried ]; then ` +
		`printf '{"status":"success","context_updates":{"greeting":"hello"}}' > "$KILROY_STAGE_STATUS_PATH"; ` +
		`else touch .tried; printf '{"status":"retry","failure_reason":"not yet"}' > "$KILROY_STAGE_STATUS_PATH"; fi`
	return pipeline(`
  build [shape=parallelogram, tool_command=` + quote(build) + `, max_retries=1]
  check [shape=octagon, command="test -f built.txt"]
  start -> build -> check -> exit`)
}

// TestCheckpointJSONFollowsEngine runs a real pipeline, sandboxed and
// not, and reads checkpoint.json at every checkpoint: its state fields
// are the engine's state at that checkpoint, its commit the one just
// made, its record number the journal's last; and the metadata stays.
func TestCheckpointJSONFollowsEngine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sandbox bool
	}{{"sandboxed", true}, {"no sandbox", false}} {
		t.Run(tc.name, func(t *testing.T) {
			o := localOptions(t, gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": checkpointPipeline()}))
			if tc.sandbox {
				o.Env.Sandbox = testSandbox(t)
			}
			p, err := PrepareLocal(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			p.checkpointed = func(req attractor.CheckpointRequest) {
				seen = append(seen, req.Node.ID)
				got := readSpecCheckpoint(t, p.Dir)
				if diff := cmp.Diff(stateFields(got), stateView(t, req.State())); diff != "" {
					t.Errorf("checkpoint.json after %s (-got +want):\n%s", req.Node.ID, diff)
				}
				head := gittest.Git(t, p.Dir.Worktree(), "rev-parse", "HEAD")
				recs, _, err := readJournal(string(p.Dir))
				if err != nil {
					t.Fatal(err)
				}
				if got.GitCommitSHA != head || got.CheckpointSeq != len(recs) || got.CheckpointSeq != len(seen) ||
					!got.Timestamp.Equal(recs[len(recs)-1].At) {
					t.Errorf("checkpoint.json after %s: commit %s, record %d at %s; want %s, %d of %d at %s",
						req.Node.ID, got.GitCommitSHA, got.CheckpointSeq, got.Timestamp, head, len(seen), len(recs), recs[len(recs)-1].At)
				}
				if got.RunID != p.RunID || got.Pipeline != "ci" || got.BaseSHA != p.BaseSHA || got.PolicyHash != p.policy.Hash() || got.Logs == nil {
					t.Errorf("checkpoint.json after %s lost its metadata or logs: %+v", req.Node.ID, got)
				}
			}
			res, err := p.Execute(context.Background(), o)
			if err != nil || res.Status != attractor.StatusSuccess {
				t.Fatalf("run = %+v, %v; want success", res, err)
			}
			if diff := cmp.Diff(seen, []string{"start", "build", "check", "exit"}); diff != "" {
				t.Fatalf("checkpoints heard (-got +want):\n%s", diff)
			}
			// What the spec's readers look for, written out.
			got := readSpecCheckpoint(t, p.Dir)
			if got.CurrentNode != "exit" || len(got.NodeRetries) != 4 || got.Context["greeting"] != "hello" ||
				got.NodeOutcomes["check"].(map[string]any)["status"] != "success" {
				t.Errorf("checkpoint.json at the end: %+v", got)
			}
		})
	}
}

// testSandbox is a bubblewrap sandbox, or a skip where none works.
func testSandbox(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	s, err := sandbox.New(sandbox.Config{PATH: os.Getenv("PATH"), StateDir: filepath.Join(t.TempDir(), "sandbox")})
	if err == nil {
		err = s.SelfTest(context.Background())
	}
	if err != nil {
		t.Skipf("needs the node sandbox: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// agreesWithJournal checks that checkpoint.json shows the state, commit,
// time and number of the journal's last record.
func agreesWithJournal(t testing.TB, dir RunDir, when string) {
	t.Helper()
	cp, err := ReadCheckpoint(string(dir))
	if err != nil {
		t.Fatal(err)
	}
	got := readSpecCheckpoint(t, dir)
	if diff := cmp.Diff(stateFields(got), stateView(t, cp.State)); diff != "" {
		t.Errorf("checkpoint.json %s against the journal (-got +want):\n%s", when, diff)
	}
	if got.GitCommitSHA != cp.CommitSHA || got.CheckpointSeq != cp.Seq || !got.Timestamp.Equal(cp.UpdatedAt) {
		t.Errorf("checkpoint.json %s: commit %s, record %d at %s; the journal's last is %s, %d at %s",
			when, got.GitCommitSHA, got.CheckpointSeq, got.Timestamp, cp.CommitSHA, cp.Seq, cp.UpdatedAt)
	}
}

// TestResumeRewritesStaleCheckpointJSON: a kill after node one's journal
// append and before the checkpoint.json rewrite that follows it leaves
// the file at node start's checkpoint. Resume brings it level with the
// journal before anything runs, and the resumed run keeps it level.
func TestResumeRewritesStaleCheckpointJSON(t *testing.T) {
	counter := filepath.Join(t.TempDir(), "one.count")
	o := localOptions(t, gittest.NewRepo(t, map[string]string{".kilroy/ci.dot": countedPipeline(counter)}))
	p, err := PrepareLocal(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var afterStart string
	p.checkpointed = func(req attractor.CheckpointRequest) {
		if req.Node.ID == "start" {
			afterStart = readFile(t, p.Dir.Checkpoint())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.Listener = cancelAfter{node: "one", cancel: cancel}
	if _, err := p.Execute(ctx, o); err != nil {
		t.Fatal(err)
	}
	o.Listener = nil
	agreesWithJournal(t, p.Dir, "after the interrupted run")
	gittest.WriteFile(t, p.Dir.Checkpoint(), afterStart)
	if got := readSpecCheckpoint(t, p.Dir).CompletedNodes; !cmp.Equal(got, []string{"start"}) {
		t.Fatalf("stale checkpoint.json has completed nodes %v, want [start]", got)
	}

	r, err := PrepareResume(context.Background(), string(p.Dir), o)
	if err != nil {
		t.Fatal(err)
	}
	agreesWithJournal(t, p.Dir, "once resume is prepared")
	r.checkpointed = func(attractor.CheckpointRequest) { agreesWithJournal(t, p.Dir, "during the resumed run") }
	res, err := r.Execute(context.Background(), o)
	if err != nil || res.Status != attractor.StatusSuccess {
		t.Fatalf("resumed run = %+v, %v; want success", res, err)
	}
	agreesWithJournal(t, p.Dir, "after the resumed run")
	if got := readSpecCheckpoint(t, p.Dir).CompletedNodes; !cmp.Equal(got, []string{"start", "one", "two", "exit"}) {
		t.Errorf("completed_nodes after the resumed run = %v", got)
	}
}
