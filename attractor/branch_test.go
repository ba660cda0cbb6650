package attractor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testDeadline bounds runs whose branches wait for each other: a broken
// engine fails the test instead of hanging it.
const testDeadline = 20 * time.Second

func runWithin(t *testing.T, h *harness, p *Pipeline) *RunResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	res, err := Run(ctx, p, h.cfg)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestBranches_RunConcurrentlyWithinMaxParallel(t *testing.T) {
	h, fh := forkHarness(t)
	lis := &plainListener{}
	h.cfg.Listener = lis
	var p pairs
	fh.exec = func(ctx context.Context, _ string, _ ExecRequest) ExecResult {
		if !p.meet(ctx) {
			return ExecResult{ExitCode: -1, Canceled: true}
		}
		return ExecResult{}
	}
	res := runWithin(t, h, mustLoad(t, fanGraph(", max_parallel=2", "",
		tool("a", "true"), tool("b", "true"), tool("c", "true"), tool("d", "true"))))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success: branches must run two at a time", res.Status, res.FailureReason)
	}
	forks, released, joins, maxOpen := fh.snapshot()
	got := []any{maxOpen, forks, len(released), joins, h.host.checkpointNodes(), fh.branchCheckpoints()}
	want := []any{2, []string{"a", "b", "c", "d"}, 4, [][]string{{"ref/a", "ref/b", "ref/c", "ref/d"}},
		[]string{"start", "fan", "join", "done"}, []string{"ref/a:a", "ref/b:b", "ref/c:c", "ref/d:d"}}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("most branches open at once, forks, releases, joins, run checkpoints, branch checkpoints (-got +want):\n%s", diff)
	}
	if n := countPrefix(lis.events, "checkpoint "); n != 8 {
		t.Errorf("listener heard %d checkpoints, want 8 (4 run nodes, 4 branch nodes): %v", n, lis.events)
	}
}

func countPrefix(list []string, prefix string) int {
	n := 0
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			n++
		}
	}
	return n
}

func TestBranches_FirstSuccessCancelsSiblings(t *testing.T) {
	h, fh := forkHarness(t)
	fh.exec = func(ctx context.Context, ref string, _ ExecRequest) ExecResult {
		if ref == "ref/a" {
			return ExecResult{}
		}
		<-ctx.Done() // b and c only end when canceled
		return ExecResult{ExitCode: -1, Canceled: true}
	}
	res := runWithin(t, h, mustLoad(t, fanGraph(", join_policy=first_success", "",
		tool("a", "true"), tool("b", "true"), tool("c", "true"))))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	var got []string
	for _, br := range fanResults(t, res) {
		got = append(got, br.Branch+" "+string(br.Status))
		if br.Branch != "a" && !strings.Contains(br.FailureReason, "canceled") {
			t.Errorf("branch %s: reason %q, want a cancellation", br.Branch, br.FailureReason)
		}
	}
	_, released, joins, _ := fh.snapshot()
	if diff := cmp.Diff([]any{got, len(released), joins}, []any{
		[]string{"a success", "b fail", "c fail"}, 3, [][]string{{"ref/a"}},
	}); diff != "" {
		t.Errorf("results, releases, joins (-got +want):\n%s", diff)
	}
}

// TestBranches_CheckpointCutByCancelIsNotAStop: a branch canceled while
// its checkpoint is being written (git killed mid-commit) ends canceled,
// keeping a failure its node had on its own; only a checkpoint that fails
// by itself stops the run, and its reason is the one the run reports.
func TestBranches_CheckpointCutByCancelIsNotAStop(t *testing.T) {
	killed := func(ctx context.Context) error {
		<-ctx.Done()
		return errors.New("git commit: signal: killed")
	}
	for _, tc := range []struct {
		name, fanAttrs string
		bExit          int
		aCkptErr       error
		wantRun        Status
		wantB          string // b's result: status and a word of its reason
	}{
		{"first_success, b failed on its own", ", join_policy=first_success", 1, nil, StatusPartialSuccess, "fail exited"},
		{"first_success, b succeeded", ", join_policy=first_success", 0, nil, StatusSuccess, "fail canceled"},
		{"wait_all, a's checkpoint fails", "", 0, errors.New("disk full"), StatusFail, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, fh := forkHarness(t)
			// a ends only once b's checkpoint has begun: otherwise a
			// first_success may cancel b before its node ran, and b then
			// has no failure of its own to keep (the run is a success,
			// rightly).
			bCheckpointing := make(chan struct{})
			fh.exec = func(ctx context.Context, ref string, _ ExecRequest) ExecResult {
				if ref == "ref/b" {
					return ExecResult{ExitCode: tc.bExit}
				}
				select {
				case <-bCheckpointing:
				case <-ctx.Done():
				}
				return ExecResult{}
			}
			fh.checkpoint = func(ctx context.Context, ref string, req CheckpointRequest) error {
				switch {
				case ref == "ref/b" && req.Node.ID == "b":
					close(bCheckpointing)
					return killed(ctx)
				case ref == "ref/a" && req.Node.ID == "a":
					return tc.aCkptErr
				}
				return nil
			}
			// b comes first in edge order, so a stop it reported would be
			// the one the run names.
			res := runWithin(t, h, mustLoad(t, fanGraph(tc.fanAttrs, "", tool("b", "true"), tool("a", "true"))))
			if res.Status != tc.wantRun {
				t.Fatalf("run = %s at %q (%s), want %s", res.Status, res.FailedNode, res.FailureReason, tc.wantRun)
			}
			if strings.Contains(res.FailureReason, "killed") {
				t.Errorf("run reason %q names the killed checkpoint", res.FailureReason)
			}
			if tc.aCkptErr != nil {
				if !strings.Contains(res.FailureReason, "disk full") {
					t.Errorf("run reason %q does not name a's checkpoint failure", res.FailureReason)
				}
				return
			}
			var b BranchResult
			for _, br := range fanResults(t, res) {
				if br.Branch == "b" {
					b = br
				}
			}
			want := strings.Fields(tc.wantB)
			if string(b.Status) != want[0] || !strings.Contains(b.FailureReason, want[1]) || b.LastNode != "b" {
				t.Errorf("branch b = %s at %q (%s), want %s at b", b.Status, b.LastNode, b.FailureReason, tc.wantB)
			}
		})
	}
}

// TestBranches_OwnFailureAsTheCancelComesIsKept: b's own status file
// fails it, but b's outcome settles only after a sibling won
// first_success and canceled b (the file was being written as b's
// command ended, and its second reading came back as the cancel did).
// The failure is b's own: the run keeps it (partial_success) and does not
// call it a cancellation, which would make the run a plain success.
func TestBranches_OwnFailureAsTheCancelComesIsKept(t *testing.T) {
	h, fh := forkHarness(t)
	statusPath := make(chan string, 1)
	rereading := make(chan struct{})
	fh.exec = func(ctx context.Context, ref string, req ExecRequest) ExecResult {
		if ref == "ref/b" {
			p := req.StageEnv[EnvStatusPath]
			if err := os.WriteFile(p, []byte("{"), 0o644); err != nil { // still being written
				t.Error(err)
			}
			statusPath <- p
			return ExecResult{}
		}
		select {
		case <-rereading:
		case <-ctx.Done():
		}
		return ExecResult{}
	}
	var once sync.Once
	h.cfg.Sleep = func(ctx context.Context, _ time.Duration) error {
		once.Do(func() {
			if err := os.WriteFile(<-statusPath, []byte(`{"status":"fail","failure_reason":"b says no"}`), 0o644); err != nil {
				t.Error(err)
			}
			close(rereading)
		})
		<-ctx.Done() // a wins meanwhile
		return nil   // and the wait ended as the cancel came
	}
	res := runWithin(t, h, mustLoad(t, fanGraph(", join_policy=first_success", "", tool("b", "true"), tool("a", "true"))))
	if res.Status != StatusPartialSuccess {
		t.Fatalf("run = %s at %q (%s), want partial_success; branches %+v", res.Status, res.FailedNode, res.FailureReason, fanResults(t, res))
	}
	for _, br := range fanResults(t, res) {
		if br.Branch == "b" && (br.Status != StatusFail || br.FailureClass == ClassCanceled || !strings.Contains(br.FailureReason, "b says no")) {
			t.Errorf("branch b = %s, %s (%s); want its own failure, b says no", br.Status, br.FailureClass, br.FailureReason)
		}
	}
}

func TestBranches_MergeConflictFailsFanInNamingPaths(t *testing.T) {
	var reasons []string
	for range 2 {
		h, fh := forkHarness(t)
		fh.joinErr = &MergeConflictError{Ref: "ref/b", Paths: []string{"same.txt", "src/x.go"}}
		res := runWithin(t, h, mustLoad(t, fanGraph("", "", tool("a", "true"), tool("b", "true"))))
		o := res.Outcomes["join"]
		got := []any{res.Status, res.FailedNode, o.FailureClass, o.Details["conflict_paths"]}
		want := []any{StatusFail, "join", ClassDeterministic, []string{"same.txt", "src/x.go"}}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("run status, failed node, class, paths (-got +want):\n%s", diff)
		}
		for _, s := range []string{"same.txt, src/x.go", "branch b"} {
			if !strings.Contains(res.FailureReason, s) {
				t.Errorf("reason %q does not name %q", res.FailureReason, s)
			}
		}
		reasons = append(reasons, res.FailureReason+"|"+o.FailureSignature)
	}
	if reasons[0] != reasons[1] {
		t.Errorf("conflict failure differs between runs:\n%s\n%s", reasons[0], reasons[1])
	}
}

func TestBranches_JoinFailureIsTransient(t *testing.T) {
	h, fh := forkHarness(t)
	fh.joinErr = errors.New("git merge: index.lock exists")
	res := runWithin(t, h, mustLoad(t, fanGraph("", "", tool("a", "true"))))
	if o := res.Outcomes["join"]; o.Status != StatusFail || o.FailureClass != ClassTransientInfra {
		t.Errorf("join = %s/%s (%s), want fail/transient_infra", o.Status, o.FailureClass, o.FailureReason)
	}
}

func TestBranches_WaitAllPartialMergesSuccessfulThenVerifies(t *testing.T) {
	h, fh := forkHarness(t)
	res := runWithin(t, h, mustLoad(t, fanGraph(", allow_partial=true", `, verify_command="grep -qx ref/c merged"`,
		tool("a", "echo a > a.txt"), tool("b", "exit 1"), tool("c", "echo c > c.txt"))))
	if res.Status != StatusPartialSuccess {
		t.Fatalf("status = %s (%s), want partial_success: b failed, tolerated by allow_partial", res.Status, res.FailureReason)
	}
	_, _, joins, _ := fh.snapshot()
	got := []any{res.Outcomes["fan"].Status, joins, strings.Contains(res.Outcomes["join"].Notes, "verify_command passed")}
	want := []any{StatusPartialSuccess, [][]string{{"ref/a", "ref/c"}}, true}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("fan status, joins, verify after merge (-got +want):\n%s", diff)
	}
	for _, f := range []string{"0-a/a.txt", "2-c/c.txt"} {
		if _, err := os.Stat(filepath.Join(fh.root, f)); err != nil {
			t.Errorf("branch process did not run in its own workspace: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "a.txt")); err == nil {
		t.Error("a branch wrote into the run's workspace")
	}
}

func TestBranches_VerifyCommandFailsAfterMerge(t *testing.T) {
	h, _ := forkHarness(t)
	res := runWithin(t, h, mustLoad(t, fanGraph("", `, verify_command="grep -q ref/nope merged"`, tool("a", "true"))))
	if o := res.Outcomes["join"]; o.Status != StatusFail || !strings.Contains(o.FailureReason, "verify_command") {
		t.Errorf("join = %s (%s), want a verify_command failure", o.Status, o.FailureReason)
	}
}

// The run must come out the same whichever branch finishes first.
func TestBranches_ResultsIndependentOfFinishingOrder(t *testing.T) {
	type summary struct {
		Results   []BranchResult
		Completed []string
		Shared    any
		Joins     [][]string
	}
	run := func(first, second string) summary {
		h, fh := forkHarness(t)
		fh.exec = func(ctx context.Context, ref string, req ExecRequest) ExecResult {
			if ref == refOf(second) {
				select { // wait until the other branch has ended
				case <-fh.releasedSignal(first):
				case <-ctx.Done():
					return ExecResult{ExitCode: -1, Canceled: true}
				}
			}
			status := `{"status":"success","context_updates":{"shared":"` + ref + `"}}`
			if err := os.WriteFile(req.StageEnv[EnvStatusPath], []byte(status), 0o644); err != nil {
				t.Error(err)
			}
			return ExecResult{}
		}
		res := runWithin(t, h, mustLoad(t, fanGraph("", "", tool("a", "true"), tool("b", "true"))))
		_, released, joins, _ := fh.snapshot()
		if diff := cmp.Diff(released, []string{refOf(first), refOf(second)}); diff != "" {
			t.Fatalf("branches did not finish in the order forced (-got +want):\n%s", diff)
		}
		return summary{fanResults(t, res), res.Completed, res.Context["shared"], joins}
	}
	ab, ba := run("a", "b"), run("b", "a")
	if diff := cmp.Diff(ab, ba); diff != "" {
		t.Errorf("a first vs b first (-a first +b first):\n%s", diff)
	}
	if ab.Shared != "ref/b" {
		t.Errorf("shared = %v, want the later branch in edge order (ref/b)", ab.Shared)
	}
}

func TestBranches_SharedNodeGetsStageDirPerBranch(t *testing.T) {
	h, _ := forkHarness(t)
	res := runWithin(t, h, mustLoad(t, `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		fan [shape=component]; join [shape=tripleoctagon]
		a [shape=parallelogram, tool_command="true"]
		b [shape=parallelogram, tool_command="true"]
		common [shape=parallelogram, tool_command="pwd"]
		start -> fan -> a -> common -> join -> done
		fan -> b -> common
	}`))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	for _, d := range []string{"a", "b", "common@0-a", "common@1-b"} {
		if _, err := os.Stat(filepath.Join(h.runDir, d, "status.json")); err != nil {
			t.Errorf("stage dir %s: %v", d, err)
		}
	}
	got := []any{res.Completed, res.State.Visits["common"]}
	want := []any{[]string{"start", "a", "common", "b", "common", "fan", "join", "done"}, 2}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("completed, visits of common (-got +want):\n%s", diff)
	}
}

func TestBranches_CancelWaitsForInFlightBranches(t *testing.T) {
	h, fh := forkHarness(t)
	ctx, cancel := context.WithTimeout(context.Background(), testDeadline)
	defer cancel()
	var p pairs
	fh.exec = func(bctx context.Context, _ string, _ ExecRequest) ExecResult {
		if p.meet(bctx) { // both branches are running: cancel the run
			cancel()
		}
		<-bctx.Done()
		return ExecResult{ExitCode: -1, Canceled: true}
	}
	res, err := Run(ctx, mustLoad(t, fanGraph("", "", tool("a", "true"), tool("b", "true"))), h.cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, released, _, _ := fh.snapshot()
	slices.Sort(released)
	fh.mu.Lock()
	active := fh.active
	fh.mu.Unlock()
	got := []any{res.Status, res.FailureClass, released, active}
	want := []any{StatusFail, ClassCanceled, []string{"ref/a", "ref/b"}, 0}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("status, class, released, processes left (-got +want):\n%s", diff)
	}
}
