package attractor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// startFailHost is an execHost whose sandbox cannot start the commands
// that contain marker: Exec returns an error, as runner/sandbox does when
// the jail or the program cannot be started.
type startFailHost struct {
	*execHost
	marker string
}

func (h startFailHost) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if strings.Contains(strings.Join(req.Argv, " "), h.marker) {
		return ExecResult{ExitCode: -1}, errors.New("sandbox: start bwrap: fork/exec: no such file or directory")
	}
	return h.execHost.Exec(ctx, req)
}

// branchFailures are the ways a branch's verify node fails: each is a node
// statement for the node "unit".
var branchFailures = []struct {
	name, unit string
	wantClass  FailureClass
	wantReason string // in the failure reason of unit
}{
	{"exit status", `unit [shape=octagon, command="echo 'unit_test.go:3: want 1 got 2'; exit 1"]`,
		ClassDeterministic, "exited with status 1"},
	{"timeout", `unit [shape=octagon, command="sleep 5", timeout="200ms"]`,
		ClassTransientInfra, "timed out"},
	{"status file", `unit [shape=octagon, command="echo '{\"status\":\"fail\",\"failure_reason\":\"3 tests failed\"}' > $KILROY_STAGE_STATUS_PATH"]`,
		ClassDeterministic, "3 tests failed"},
	{"sandbox start failure", `unit [shape=octagon, command="cannot-start ./..."]`,
		ClassDeterministic, "could not start verify command"},
}

// docsFan is docs/pipelines.md's parallel example with fanAttrs on fan and
// unit's statement given.
func docsFan(fanAttrs, unit string) string {
	return fmt.Sprintf(`digraph ci {
		start [shape=Mdiamond]; exit [shape=Msquare]
		fan [shape=component%s]
		%s
		lint [shape=octagon, command="true"]
		join [shape=tripleoctagon]
		start -> fan
		fan -> unit -> join
		fan -> lint -> join
		join -> exit
	}`, fanAttrs, unit)
}

// runBranchFailure runs src with the run's workspace shared by the
// branches (their commands that contain "cannot-start" cannot be started),
// or with a host that forks a workspace per branch.
func runBranchFailure(t *testing.T, src string, fork bool) *RunResult {
	t.Helper()
	h := newHarness(t)
	if fork {
		h, _ = forkHarness(t)
	} else {
		h.cfg.Host = startFailHost{execHost: h.host, marker: "cannot-start"}
	}
	return runWithin(t, h, mustLoad(t, src))
}

// TestBranchFailureFailsWaitAll: under wait_all (the default, and written
// out) a branch that fails, however it fails, fails the parallel node with
// a reason naming the branch and node, the fan-in passes the failure on,
// and the run fails at the parallel node.
func TestBranchFailureFailsWaitAll(t *testing.T) {
	for _, policy := range []string{"", `, join_policy="wait_all"`} {
		for _, bf := range branchFailures {
			for _, fork := range []bool{false, true} {
				if fork && bf.name == "sandbox start failure" {
					continue // TestBranchStartFailureForked covers a fork that cannot start
				}
				t.Run(fmt.Sprintf("%s/%s/fork=%v", policy, bf.name, fork), func(t *testing.T) {
					res := runBranchFailure(t, docsFan(policy, bf.unit), fork)
					got := []any{res.Status, res.FailedNode, res.Outcomes["unit"].Status, res.Outcomes["lint"].Status,
						res.Outcomes["fan"].Status, res.Outcomes["join"].Status, res.Outcomes["unit"].FailureClass}
					want := []any{StatusFail, "fan", StatusFail, StatusSuccess, StatusFail, StatusFail, bf.wantClass}
					if diff := cmp.Diff(got, want); diff != "" {
						t.Errorf("run, failed node, unit, lint, fan, join, unit's class (-got +want):\n%s", diff)
					}
					for _, s := range []string{"branch unit failed at node unit", bf.wantReason} {
						if !strings.Contains(res.FailureReason, s) {
							t.Errorf("run reason %q does not say %q", res.FailureReason, s)
						}
					}
					if _, ok := res.Outcomes["exit"]; ok {
						t.Error("the exit node ran after a failed branch")
					}
				})
			}
		}
	}
}

// TestBranchStartFailureForked: a branch whose workspace cannot be made
// (the host's fork fails) fails the wait_all parallel node too.
func TestBranchStartFailureForked(t *testing.T) {
	h, _ := forkHarness(t)
	h.cfg.Host = failingForkHost{h.cfg.Host.(*forkHost), "unit"}
	res := runWithin(t, h, mustLoad(t, docsFan("", `unit [shape=octagon, command="true"]`)))
	if res.Status != StatusFail || res.FailedNode != "fan" || !strings.Contains(res.FailureReason, "could not make a workspace for branch unit") {
		t.Errorf("run = %s at %q (%s), want a failure at fan naming the branch", res.Status, res.FailedNode, res.FailureReason)
	}
}

// failingForkHost cannot fork the branch headed by head.
type failingForkHost struct {
	*forkHost
	head string
}

func (h failingForkHost) Fork(ctx context.Context, req ForkRequest) (Branch, error) {
	if req.Head == h.head {
		return Branch{}, errors.New("git worktree add: No space left on device")
	}
	return h.forkHost.Fork(ctx, req)
}

// TestBranchFailureToleratedOnlyWhenAsked: allow_partial and first_success
// tolerate a failed branch, and the run then ends partial_success naming
// the failed node, never success; with every branch failed they fail.
func TestBranchFailureToleratedOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct {
		name, fanAttrs string
		unit           string
		wantFan        Status
		wantRun        Status
		wantTolerated  []string
	}{
		{"allow_partial", `, allow_partial=true`, branchFailures[0].unit, StatusPartialSuccess, StatusPartialSuccess, []string{"unit"}},
		{"wait_all with allow_partial", `, join_policy="wait_all", allow_partial=true`, branchFailures[2].unit, StatusPartialSuccess, StatusPartialSuccess, []string{"unit"}},
		{"first_success after a failed branch", `, join_policy="first_success"`, branchFailures[1].unit, StatusSuccess, StatusPartialSuccess, []string{"unit"}},
		{"first_success, start failure", `, join_policy="first_success"`, branchFailures[3].unit, StatusSuccess, StatusPartialSuccess, []string{"unit"}},
		{"allow_partial, every branch passes", `, allow_partial=true`, `unit [shape=octagon, command="true"]`, StatusSuccess, StatusSuccess, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runBranchFailure(t, docsFan(tc.fanAttrs, tc.unit), false)
			got := []any{res.Outcomes["fan"].Status, res.Status, res.Tolerated}
			want := []any{tc.wantFan, tc.wantRun, tc.wantTolerated}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("fan, run, tolerated (-got +want):\n%s", diff)
			}
		})
	}
	for _, attrs := range []string{`, allow_partial=true`, `, join_policy="first_success"`} {
		t.Run("every branch fails"+attrs, func(t *testing.T) {
			src := strings.Replace(docsFan(attrs, branchFailures[0].unit), `command="true"`, `command="exit 3"`, 1)
			res := runBranchFailure(t, src, false)
			if res.Status != StatusFail || res.FailedNode != "fan" || !strings.Contains(res.FailureReason, "every branch failed") {
				t.Errorf("run = %s at %q (%s), want fail at fan: every branch failed", res.Status, res.FailedNode, res.FailureReason)
			}
		})
	}
}

// TestParallelFailureRoutesLikeAnyFail: the fan-in passes a failed
// parallel node on, and its edges route it: a condition edge, a diamond,
// the retry target of the fan-in or of the parallel node. Handled, the run
// goes on.
func TestParallelFailureRoutesLikeAnyFail(t *testing.T) {
	flaky := `unit [shape=octagon, command=` + fmt.Sprintf("%q", failsUntil("u", 1)) + `]`
	for _, tc := range []struct {
		name, fanAttrs, joinAttrs, edges string
		wantPath                         []string
	}{
		{
			name:     "condition edge on the fan-in",
			edges:    `report [shape=parallelogram, tool_command="true"]; join -> report [condition="outcome=fail"]; report -> exit`,
			wantPath: []string{"start", "unit", "lint", "fan", "join", "report", "exit"},
		},
		{
			name:     "diamond after the fan-in",
			edges:    `report [shape=parallelogram, tool_command="true"]; join -> gate; gate [shape=diamond]; gate -> report [condition="outcome=fail"]; gate -> exit [condition="outcome=success"]; report -> exit`,
			wantPath: []string{"start", "unit", "lint", "fan", "join", "gate", "report", "exit"},
		},
		{
			name:     "retry target of the parallel node",
			fanAttrs: `, retry_target="fan"`,
			edges:    `join -> exit`,
			wantPath: []string{"start", "unit", "lint", "fan", "join", "unit", "lint", "fan", "join", "exit"},
		},
		{
			name:      "retry target of the fan-in",
			joinAttrs: `, retry_target="fan"`,
			edges:     `join -> exit`,
			wantPath:  []string{"start", "unit", "lint", "fan", "join", "unit", "lint", "fan", "join", "exit"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := fmt.Sprintf(`digraph ci {
				start [shape=Mdiamond]; exit [shape=Msquare]
				fan [shape=component%s]
				%s
				lint [shape=octagon, command="true"]
				join [shape=tripleoctagon%s]
				start -> fan
				fan -> unit -> join
				fan -> lint -> join
				%s
			}`, tc.fanAttrs, flaky, tc.joinAttrs, tc.edges)
			h := newHarness(t)
			res := runWithin(t, h, mustLoad(t, src))
			if res.Status != StatusSuccess {
				t.Errorf("run = %s (%s), want success: an edge handled the failure", res.Status, res.FailureReason)
			}
			if diff := cmp.Diff(res.Completed, tc.wantPath); diff != "" {
				t.Errorf("path (-got +want):\n%s", diff)
			}
		})
	}
}

// TestValidateSaysWhenParallelToleratesFailure: allow_partial and
// first_success, on the parallel node or its fan-in, get the
// parallel_tolerates_failure warning; wait_all does not.
func TestValidateSaysWhenParallelToleratesFailure(t *testing.T) {
	for _, tc := range []struct {
		fan, join string
		want      bool
	}{
		{"", "", false},
		{`, join_policy="wait_all"`, "", false},
		{`, allow_partial=true`, "", true},
		{`, join_policy="first_success"`, "", true},
		{"", `, join_policy="first_success"`, true},
		{"", `, allow_partial=true`, true},
	} {
		src := strings.Replace(docsFan(tc.fan, `unit [shape=octagon, command="true"]`),
			"join [shape=tripleoctagon]", "join [shape=tripleoctagon"+tc.join+"]", 1)
		_, ds, err := Load("ci.dot", []byte(src))
		if err != nil {
			t.Fatalf("Load: %v\n%s", err, formatDiags(ds))
		}
		if got := hasRule(ds, RuleParallelTolerates); got != tc.want {
			t.Errorf("fan%s join%s: parallel_tolerates_failure = %v, want %v\n%s", tc.fan, tc.join, got, tc.want, formatDiags(ds))
		}
	}
}

// TestBranchFailureSurvivesResume: a run resumed from the checkpoint after
// the parallel node (its state through JSON, as a host stores it) still
// fails at the parallel node under wait_all, and still ends partial_success
// naming the tolerated node under allow_partial.
func TestBranchFailureSurvivesResume(t *testing.T) {
	for _, tc := range []struct {
		fanAttrs      string
		want          Status
		wantTolerated []string
	}{
		{"", StatusFail, nil},
		{", allow_partial=true", StatusPartialSuccess, []string{"unit"}},
	} {
		t.Run(tc.fanAttrs, func(t *testing.T) {
			src := docsFan(tc.fanAttrs, branchFailures[0].unit)
			full := newHarness(t)
			full.run(mustLoad(t, src))
			var state *State
			for _, c := range full.host.checkpoints {
				if c.Node.ID == "fan" {
					b, err := json.Marshal(c.State)
					if err != nil {
						t.Fatal(err)
					}
					if err := json.Unmarshal(b, &state); err != nil {
						t.Fatal(err)
					}
				}
			}
			if state == nil {
				t.Fatal("no checkpoint after fan")
			}
			got, err := Resume(context.Background(), mustLoad(t, src), newHarness(t).cfg, state)
			if err != nil {
				t.Fatalf("Resume: %v", err)
			}
			if got.Status != tc.want || !cmp.Equal(got.Tolerated, tc.wantTolerated) {
				t.Errorf("resumed run = %s, tolerated %v (%s); want %s, %v", got.Status, got.Tolerated, got.FailureReason, tc.want, tc.wantTolerated)
			}
			if tc.want == StatusFail && (got.FailedNode != "fan" || !strings.Contains(got.FailureReason, "branch unit failed at node unit")) {
				t.Errorf("resumed run failed at %q (%s), want fan naming branch unit", got.FailedNode, got.FailureReason)
			}
		})
	}
}

// TestValidateNotesWaitAllByDefault: parallel_wait_all notes a fan-out
// that writes no join rule and routes no failure; written rules, a fail
// route after the fan-in, or a retry target silence it.
func TestValidateNotesWaitAllByDefault(t *testing.T) {
	unit := `unit [shape=octagon, command="true"]`
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"bare", docsFan("", unit), true},
		{"join_policy written", docsFan(`, join_policy="wait_all"`, unit), false},
		{"join_policy on the fan-in", strings.Replace(docsFan("", unit), "join [shape=tripleoctagon]", `join [shape=tripleoctagon, join_policy="wait_all"]`, 1), false},
		{"allow_partial", docsFan(`, allow_partial=true`, unit), false},
		{"fail edge after the fan-in", strings.Replace(docsFan("", unit), "join -> exit", `join -> exit; join -> fix [condition="outcome=fail"]; fix [shape=parallelogram, tool_command="true"]; fix -> exit`, 1), false},
		{"retry target on the parallel node", docsFan(`, retry_target="fan"`, unit), false},
	} {
		_, ds, err := Load("ci.dot", []byte(tc.src))
		if err != nil {
			t.Fatalf("%s: Load: %v\n%s", tc.name, err, formatDiags(ds))
		}
		if got := hasRule(ds, RuleParallelWaitAll); got != tc.want {
			t.Errorf("%s: parallel_wait_all = %v, want %v\n%s", tc.name, got, tc.want, formatDiags(ds))
		}
	}
}
