package attractor

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The execution rows of the Attractor spec's cross-feature parity matrix.

func TestParity_ExecuteLinear(t *testing.T) {
	h := newHarness(t)
	res := h.run(mustLoad(t, chain("",
		`a [shape=parallelogram, tool_command="echo a > a.txt"]`,
		`b [shape=parallelogram, tool_command="cat a.txt"]`)))
	want := []string{"start", "a", "b", "done"}
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	if diff := cmp.Diff(res.Completed, want); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(h.host.checkpointNodes(), want); diff != "" {
		t.Errorf("checkpoints (-got +want):\n%s", diff)
	}
	if got := res.Context["tool.output"]; got != "a\n" {
		t.Errorf("tool.output = %q, want the output of b", got)
	}
	for _, n := range want {
		for _, f := range []string{"status.json", "invocation.json"} {
			if _, err := os.Stat(filepath.Join(h.runDir, n, f)); err != nil {
				t.Errorf("stage %s: %v", n, err)
			}
		}
	}
}

func TestParity_ConditionalBranching(t *testing.T) {
	for _, tc := range []struct {
		name, cmd string
		want      []string
	}{
		{"success path", "true", []string{"start", "work", "check", "ship", "done"}},
		{"fail path", "exit 1", []string{"start", "work", "check", "fix", "done"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(mustLoad(t, `digraph t {
				start [shape=Mdiamond]; done [shape=Msquare]
				work [shape=parallelogram, tool_command="`+tc.cmd+`"]
				check [shape=diamond]
				ship [shape=parallelogram, tool_command="true"]
				fix [shape=parallelogram, tool_command="true"]
				start -> work
				work -> check [condition="outcome=success"]
				work -> check [condition="outcome=fail"]
				check -> ship [condition="outcome=success"]
				check -> fix [condition="outcome=fail"]
				ship -> done; fix -> done
			}`))
			if diff := cmp.Diff(res.Completed, tc.want); diff != "" {
				t.Errorf("completed (-got +want):\n%s", diff)
			}
			if res.Status != StatusSuccess {
				t.Errorf("status = %s (%s), want success", res.Status, res.FailureReason)
			}
		})
	}
}

// countingTool is a tool_command that writes a status file from a list of
// per-attempt statuses, counting attempts in a workspace file.
func countingTool(statuses ...string) string {
	var cases strings.Builder
	for i, s := range statuses {
		fmt.Fprintf(&cases, `%d) echo '%s' > "$KILROY_STAGE_STATUS_PATH";; `, i+1, s)
	}
	return fmt.Sprintf(`n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; case $n in %s esac`, cases.String())
}

func TestParity_RetryOnFailure(t *testing.T) {
	retry := `{"status":"retry","failure_reason":"not yet"}`
	ok := `{"status":"success"}`
	transient := `{"status":"fail","failure_reason":"registry said 503","failure_class":"transient_infra"}`
	for _, tc := range []struct {
		name         string
		attrs        string
		statuses     []string
		wantStatus   Status
		wantClass    FailureClass
		wantAttempts int
	}{
		{"retry then success", "", []string{retry, retry, ok}, StatusSuccess, "", 3},
		{"retries exhausted", "", []string{retry, retry, retry, ok}, StatusFail, ClassBudgetExhausted, 3},
		{"exhausted with allow_partial", "allow_partial=true,", []string{retry, retry, retry}, StatusPartialSuccess, "", 3},
		{"transient failure retried", "", []string{transient, ok}, StatusSuccess, "", 2},
		{"deterministic failure not retried", "", []string{`{"status":"fail","failure_reason":"compile error"}`, ok}, StatusFail, ClassDeterministic, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			node := fmt.Sprintf(`work [shape=parallelogram, max_retries=2, %s tool_command=%q]`, tc.attrs, countingTool(tc.statuses...))
			p := mustLoad(t, `digraph t {
				start [shape=Mdiamond]; done [shape=Msquare]
				`+node+`
				start -> work
				work -> done [condition="outcome!=fail"]
				work -> done [condition="outcome=fail"]
			}`)
			res := h.run(p)
			o := res.Outcomes["work"]
			got := []any{o.Status, o.FailureClass, len(h.host.execs), len(h.sleeps)}
			want := []any{tc.wantStatus, tc.wantClass, tc.wantAttempts, tc.wantAttempts - 1}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("status, class, attempts, sleeps (-got +want):\n%s\nreason: %s", diff, o.FailureReason)
			}
		})
	}
}

func TestRetryBackoffDelays(t *testing.T) {
	h := newHarness(t)
	p := mustLoad(t, chain(`retry.backoff.initial="100ms"; retry.backoff.factor=3; retry.backoff.max="500ms"`,
		`work [shape=parallelogram, max_retries=3, tool_command="echo '{\"status\":\"retry\"}' > $KILROY_STAGE_STATUS_PATH"]`))
	h.cfg.Rand = func() float64 { return 0.5 } // jitter factor exactly 1
	h.run(p)
	want := []string{"100ms", "300ms", "500ms"}
	var got []string
	for _, d := range h.sleeps {
		got = append(got, d.String())
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("backoff delays (-got +want):\n%s", diff)
	}
}

const goalGatePipeline = `digraph t {
	start [shape=Mdiamond]; done [shape=Msquare]
	%s
	work [shape=parallelogram, goal_gate=true, %s tool_command=%q]
	start -> work
	work -> done [condition="outcome=success"]
	work -> done [condition="outcome=fail"]
}`

func TestParity_GoalGateBlocksExit(t *testing.T) {
	fail, ok := `{"status":"fail","failure_reason":"tests red"}`, `{"status":"success"}`
	t.Run("retry target", func(t *testing.T) {
		h := newHarness(t)
		res := h.run(mustLoad(t, fmt.Sprintf(goalGatePipeline, "", "retry_target=work,", countingTool(fail, ok))))
		if res.Status != StatusSuccess {
			t.Fatalf("status = %s (%s), want success after the retry target", res.Status, res.FailureReason)
		}
		if diff := cmp.Diff(res.Completed, []string{"start", "work", "work", "done"}); diff != "" {
			t.Errorf("completed (-got +want):\n%s", diff)
		}
		if diff := cmp.Diff(h.rec.edgeList(), []string{"start->work weight", "work->done condition", "done->work goal_gate", "work->done condition"}); diff != "" {
			t.Errorf("edges (-got +want):\n%s", diff)
		}
	})
	t.Run("graph retry target", func(t *testing.T) {
		h := newHarness(t)
		res := h.run(mustLoad(t, fmt.Sprintf(goalGatePipeline, "retry_target=work", "", countingTool(fail, ok))))
		if res.Status != StatusSuccess {
			t.Fatalf("status = %s (%s), want success after the graph retry target", res.Status, res.FailureReason)
		}
	})
	t.Run("no retry target", func(t *testing.T) {
		h := newHarness(t)
		res := h.run(mustLoad(t, fmt.Sprintf(goalGatePipeline, "", "", countingTool(fail))))
		if res.Status != StatusFail || !strings.Contains(res.FailureReason, "goal gate work unsatisfied") ||
			!strings.Contains(res.FailureReason, "tests red") {
			t.Fatalf("got %s %q, want fail naming the gate and its reason", res.Status, res.FailureReason)
		}
		if diff := cmp.Diff(res.Completed, []string{"start", "work"}); diff != "" {
			t.Errorf("exit must not run (-got +want):\n%s", diff)
		}
	})
}

func TestParity_GoalGateAllowsExit(t *testing.T) {
	h := newHarness(t)
	res := h.run(mustLoad(t, fmt.Sprintf(goalGatePipeline, "", "retry_target=work,", countingTool(`{"status":"success"}`))))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	if diff := cmp.Diff(res.Completed, []string{"start", "work", "done"}); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
}

func TestParity_WaitHumanRoutes(t *testing.T) {
	src := `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		gate [shape=hexagon, label="Ship it?"]
		ship [shape=parallelogram, tool_command="true"]
		fix [shape=parallelogram, tool_command="true"]
		start -> gate
		gate -> ship [label="[A] Approve"]
		gate -> fix [label="[R] Request changes"]
		ship -> done; fix -> done
	}`
	for _, tc := range []struct {
		name   string
		answer Answer
		want   string
	}{
		{"by key", Answer{Choice: "r"}, "fix"},
		{"by label", Answer{Choice: "approve"}, "ship"},
		{"by target", Answer{Choice: "fix"}, "fix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			q := NewQueue(tc.answer)
			h.cfg.Interviewer = q
			res := h.run(mustLoad(t, src))
			if diff := cmp.Diff(res.Completed, []string{"start", "gate", tc.want, "done"}); diff != "" {
				t.Errorf("completed (-got +want):\n%s", diff)
			}
			wantQ := []Question{{RunID: "run1", Node: "gate", Text: "Ship it?", Choices: []Choice{
				{Key: "A", Label: "[A] Approve", To: "ship"}, {Key: "R", Label: "[R] Request changes", To: "fix"}}}}
			if diff := cmp.Diff(q.Asked(), wantQ); diff != "" {
				t.Errorf("questions (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParity_EdgeConditionBeatsWeight(t *testing.T) {
	h := newHarness(t)
	res := h.run(mustLoad(t, `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		heavy [shape=parallelogram, tool_command="true"]; cond [shape=parallelogram, tool_command="true"]
		start -> heavy [weight=100]
		start -> cond [condition="outcome=success"]
		heavy -> done; cond -> done
	}`))
	if diff := cmp.Diff(h.rec.edgeList()[0], "start->cond condition"); diff != "" || res.Status != StatusSuccess {
		t.Errorf("first edge (-got +want):\n%s", diff)
	}
}

func TestParity_WeightBreaksTies(t *testing.T) {
	h := newHarness(t)
	h.run(mustLoad(t, `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		a [shape=parallelogram, tool_command="true"]; b [shape=parallelogram, tool_command="true"]
		start -> a [weight=1]
		start -> b [weight=5]
		a -> done; b -> done
	}`))
	if diff := cmp.Diff(h.rec.edgeList()[0], "start->b weight"); diff != "" {
		t.Errorf("first edge (-got +want):\n%s", diff)
	}
}

func TestParity_LexicalTiebreak(t *testing.T) {
	h := newHarness(t)
	h.run(mustLoad(t, `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		zed [shape=parallelogram, tool_command="true"]; alpha [shape=parallelogram, tool_command="true"]
		start -> zed
		start -> alpha
		zed -> done; alpha -> done
	}`))
	if diff := cmp.Diff(h.rec.edgeList()[0], "start->alpha lexical"); diff != "" {
		t.Errorf("first edge (-got +want):\n%s", diff)
	}
}

func TestParity_ContextVisibleToNextNode(t *testing.T) {
	h := newHarness(t)
	var seen string
	h.cfg.Handlers = map[string]Handler{"probe": HandlerFunc(func(_ context.Context, s *Stage) (Outcome, error) {
		seen, _ = s.Context.String("greeting")
		return Outcome{Status: StatusSuccess}, nil
	})}
	res := h.run(mustLoad(t, `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		write [shape=parallelogram, tool_command="echo '{\"status\":\"success\",\"context_updates\":{\"greeting\":\"hello\"}}' > $KILROY_STAGE_STATUS_PATH"]
		probe [type=probe]
		other [shape=parallelogram, tool_command="true"]
		start -> write
		write -> probe [condition="context.greeting=hello"]
		write -> other
		probe -> done; other -> done
	}`, "probe"))
	if diff := cmp.Diff(res.Completed, []string{"start", "write", "probe", "done"}); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
	if seen != "hello" {
		t.Errorf("probe saw greeting=%q, want hello", seen)
	}
}

func TestParity_CheckpointResumeSameResult(t *testing.T) {
	src := chain("",
		`a [shape=parallelogram, tool_command="echo '{\"status\":\"success\",\"context_updates\":{\"n\":1}}' > $KILROY_STAGE_STATUS_PATH"]`,
		`b [shape=parallelogram, tool_command="echo b"]`,
		`c [shape=parallelogram, tool_command="echo c"]`)
	full := newHarness(t)
	want := full.run(mustLoad(t, src))

	// Take the checkpoint after b through JSON, as a host would store it.
	var state *State
	for _, c := range full.host.checkpoints {
		if c.Node.ID == "b" {
			b, err := json.Marshal(c.State)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &state); err != nil {
				t.Fatal(err)
			}
		}
	}
	resumed := newHarness(t)
	got, err := Resume(context.Background(), mustLoad(t, src), resumed.cfg, state)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if diff := cmp.Diff(got.Completed, want.Completed); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(stringView(got.Context), stringView(want.Context)); diff != "" {
		t.Errorf("context (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(resumed.host.checkpointNodes(), []string{"c", "done"}); diff != "" {
		t.Errorf("resumed run executed (-got +want):\n%s", diff)
	}
	if got.Status != want.Status {
		t.Errorf("status = %s, want %s", got.Status, want.Status)
	}
	if _, err := Resume(context.Background(), mustLoad(t, src), resumed.cfg, got.State); err == nil {
		t.Error("resuming a finished run succeeded, want ErrRunFinished")
	}
}

func stringView(m map[string]any) map[string]string {
	c := NewContext(m)
	out := map[string]string{}
	for _, k := range c.Keys() {
		out[k], _ = c.String(k)
	}
	return out
}

func TestParity_ParallelFanOutFanIn(t *testing.T) {
	update := func(k, v string) string {
		return fmt.Sprintf(`echo '{\"status\":\"success\",\"context_updates\":{\"%s\":\"%s\",\"shared\":\"%s\"}}' > $KILROY_STAGE_STATUS_PATH`, k, v, v)
	}
	h := newHarness(t)
	res := h.run(mustLoad(t, `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		fan [shape=component]
		lint [shape=parallelogram, tool_command="`+update("lint", "clean")+`"]
		test1 [shape=parallelogram, tool_command="`+update("test", "green")+`"]
		test2 [shape=parallelogram, tool_command="true"]
		join [shape=tripleoctagon]
		start -> fan
		fan -> lint; fan -> test1
		lint -> join
		test1 -> test2 -> join
		join -> done
	}`))
	if res.Status != StatusSuccess {
		t.Fatalf("status = %s (%s), want success", res.Status, res.FailureReason)
	}
	want := map[string]string{"lint": "clean", "test": "green", "shared": "green", "parallel.fan_in.best_id": "lint"}
	got := map[string]string{}
	for k := range want {
		got[k] = stringView(res.Context)[k]
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("merged context (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(res.Completed, []string{"start", "lint", "test1", "test2", "fan", "join", "done"}); diff != "" {
		t.Errorf("completed (-got +want):\n%s", diff)
	}
	if _, ok := res.Context["lint"]; !ok {
		t.Error("branch updates did not reach the run context through the fan-in")
	}
}

// TestParallelJoinPolicies: wait_all fails on a failed branch; only
// allow_partial and first_success tolerate it, and then the run ends
// partial_success, not success.
func TestParallelJoinPolicies(t *testing.T) {
	src := `digraph t {
		start [shape=Mdiamond]; done [shape=Msquare]
		fan [shape=component, %s]
		a [shape=parallelogram, tool_command="exit 1"]
		b [shape=parallelogram, tool_command="true"]
		c [shape=parallelogram, tool_command="true"]
		join [shape=tripleoctagon]
		start -> fan
		fan -> a; fan -> b; fan -> c
		a -> join; b -> join; c -> join
		join -> done
	}`
	for _, tc := range []struct {
		attrs            string
		wantFan, wantRun Status
		wantRan          []string
	}{
		{"join_policy=wait_all", StatusFail, StatusFail, []string{"a", "b", "c"}},
		{"join_policy=wait_all, allow_partial=true", StatusPartialSuccess, StatusPartialSuccess, []string{"a", "b", "c"}},
		{"join_policy=first_success", StatusSuccess, StatusPartialSuccess, []string{"a", "b"}},
	} {
		t.Run(tc.attrs, func(t *testing.T) {
			h := newHarness(t)
			res := h.run(mustLoad(t, fmt.Sprintf(src, tc.attrs)))
			var ran []string
			for _, c := range h.host.checkpointNodes() {
				if len(c) == 1 {
					ran = append(ran, c)
				}
			}
			got := []any{res.Outcomes["fan"].Status, ran, res.Status}
			want := []any{tc.wantFan, tc.wantRan, tc.wantRun}
			if diff := cmp.Diff(got, want); diff != "" {
				t.Errorf("fan status, branches run, run status (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParity_CustomHandler(t *testing.T) {
	h := newHarness(t)
	var got []string
	h.cfg.Handlers = map[string]Handler{"deploy.preview": HandlerFunc(func(_ context.Context, s *Stage) (Outcome, error) {
		got = append(got, s.Node.ID, s.Predecessor, s.Env[EnvNodeID], filepath.Base(s.Dir))
		return Outcome{Status: StatusSuccess, ContextUpdates: map[string]any{"preview.url": "https://example.test"}}, nil
	})}
	res := h.run(mustLoad(t, chain("", `preview [type="deploy.preview"]`), "deploy.preview"))
	if diff := cmp.Diff(got, []string{"preview", "start", "preview", "preview"}); diff != "" {
		t.Errorf("handler saw (-got +want):\n%s", diff)
	}
	if res.Context["preview.url"] != "https://example.test" || res.Status != StatusSuccess {
		t.Errorf("run %s, context preview.url=%v", res.Status, res.Context["preview.url"])
	}
}

func TestParity_TenPlusNodesExecute(t *testing.T) {
	var nodes []string
	want := []string{"start"}
	for i := range 12 {
		id := fmt.Sprintf("n%02d", i)
		nodes = append(nodes, fmt.Sprintf(`%s [shape=parallelogram, tool_command="echo %d >> trail"]`, id, i))
		want = append(want, id)
	}
	want = append(want, "done")
	h := newHarness(t)
	res := h.run(mustLoad(t, chain("", nodes...)))
	if diff := cmp.Diff(res.Completed, want); diff != "" || res.Status != StatusSuccess {
		t.Errorf("status %s, completed (-got +want):\n%s", res.Status, diff)
	}
	trail, _ := os.ReadFile(filepath.Join(h.workspace, "trail"))
	if n := strings.Count(string(trail), "\n"); n != 12 {
		t.Errorf("trail has %d lines, want 12", n)
	}
}
