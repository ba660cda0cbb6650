package attractor

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor/dot"
)

// load loads src as "t.dot" and fails the test on a syntax error.
func load(t *testing.T, src string, opts ...LoadOption) (*Pipeline, Diagnostics) {
	t.Helper()
	p, ds, err := Load("t.dot", []byte(src), opts...)
	if p == nil {
		t.Fatalf("Load: %v", err)
	}
	return p, ds
}

// rulesOf lists "rule@line:col" for each diagnostic.
func rulesOf(ds Diagnostics) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Rule+"@"+d.Pos().String()[len(d.File)+1:])
	}
	return out
}

func TestLoadKinds(t *testing.T) {
	p, _ := load(t, `digraph G {
		s [shape=Mdiamond]; e [shape=Msquare]; b; b2 [shape=box]
		t [shape=parallelogram]; v [shape=octagon]; c [shape=diamond]; h [shape=hexagon]
		par [shape=component]; fi [shape=tripleoctagon]; m [shape=house]
		va [shape=octagon, type="verify.artifacts"]; tt [type=tool]; vv [type=verify]
		cu [type="my.custom"]
	}`)
	want := map[string]Kind{"s": KindStart, "e": KindExit, "b": KindCodergen, "b2": KindCodergen,
		"t": KindTool, "v": KindVerify, "c": KindConditional, "h": KindWaitHuman, "par": KindParallel,
		"fi": KindFanIn, "m": KindManagerLoop, "va": KindVerifyArtifacts, "tt": KindTool, "vv": KindVerify,
		"cu": "my.custom"}
	got := map[string]Kind{}
	for _, n := range p.Nodes {
		got[n.ID] = n.Kind
	}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("kinds (-got +want):\n%s", diff)
	}
}

func TestLoadSubgraphDefaultsAndClasses(t *testing.T) {
	p, _ := load(t, `digraph G {
		node [timeout="60s"]
		before
		subgraph cluster_loop {
			node [thread_id="loop-a", timeout="900s"]
			Plan      [label="Plan next step"]
			Implement [label="Implement", timeout="1800s", class="code, critical"]
			subgraph inner { label="Deep Inner!"; Deep }
			label = "Loop A"
		}
		after
	}`)
	tests := []struct {
		id       string
		timeout  time.Duration
		threadID string
		classes  []string
	}{
		{"before", time.Minute, "", nil},
		{"Plan", 900 * time.Second, "loop-a", []string{"loop-a"}},
		{"Implement", 1800 * time.Second, "loop-a", []string{"code", "critical", "loop-a"}},
		{"Deep", 900 * time.Second, "loop-a", []string{"loop-a", "deep-inner"}},
		{"after", time.Minute, "", nil},
	}
	for _, tt := range tests {
		n := p.Node(tt.id)
		if n == nil {
			t.Fatalf("no node %s", tt.id)
		}
		if n.Timeout != tt.timeout || n.ThreadID != tt.threadID || !cmp.Equal(n.Classes, tt.classes) {
			t.Errorf("%s: timeout %v thread %q classes %q; want %v %q %q", tt.id, n.Timeout, n.ThreadID, n.Classes, tt.timeout, tt.threadID, tt.classes)
		}
	}
	if src := p.Node("Plan").Attrs["thread_id"].Source; src != FromDefault {
		t.Errorf("Plan thread_id source = %s, want default", src)
	}
	if src := p.Node("Implement").Attrs["timeout"].Source; src != FromExplicit {
		t.Errorf("Implement timeout source = %s, want explicit", src)
	}
}

func TestDeriveClass(t *testing.T) {
	for in, want := range map[string]string{"Loop A": "loop-a", "Code Review (fast)": "code-review-fast", "x_y.z": "xyz", "": ""} {
		if got := deriveClass(in); got != want {
			t.Errorf("deriveClass(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoadEdgeDefaultsScoped(t *testing.T) {
	p, _ := load(t, `digraph G {
		a; b; c; d
		edge [weight=5]
		a -> b
		subgraph s { edge [weight=7, fidelity="full"]; b -> c [label="x"] }
		c -> d [weight=1]
	}`)
	var got []string
	for _, e := range p.Edges {
		got = append(got, e.From+">"+e.To+":"+itoa(int(e.Weight))+":"+e.Fidelity+":"+e.Label)
	}
	want := []string{"a>b:5::", "b>c:7:full:x", "c>d:1::"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("edges (-got +want):\n%s", diff)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

func TestLoadStylesheet(t *testing.T) {
	p, ds := load(t, `digraph G {
		graph [goal="X", llm_provider="graphwide", model_stylesheet="
			* { llm_model: m-universal; llm_provider: p-universal; }
			box { llm_model: m-box; }
			.code { llm_model: m-code-1; }
			.code { llm_model: m-code-2; reasoning_effort: medium }
			#critical { llm_model: m-id; }
			hexagon { llm_model: m-hex }
		"]
		plain [shape=parallelogram, tool_command="true"]
		boxed [prompt="p"]
		coded [class="code", prompt="p"]
		critical [class="code", prompt="p"]
		pinned [class="code", llm_model="m-explicit", prompt="p"]
		subgraph s { node [llm_model="m-default"]; defaulted [class="code", prompt="p"] }
	}`)
	if ds.HasErrors() {
		t.Logf("diagnostics: %v", ds)
	}
	tests := []struct{ id, model, provider, effort string }{
		{"plain", "m-universal", "p-universal", ""},
		{"boxed", "m-box", "p-universal", ""},
		{"coded", "m-code-2", "p-universal", "medium"},
		{"critical", "m-id", "p-universal", "medium"},
		{"pinned", "m-explicit", "p-universal", "medium"},
		{"defaulted", "m-default", "p-universal", "medium"},
	}
	for _, tt := range tests {
		n := p.Node(tt.id)
		if n.LLMModel != tt.model || n.LLMProvider != tt.provider || n.ReasoningEffort != tt.effort {
			t.Errorf("%s: model %q provider %q effort %q; want %q %q %q", tt.id, n.LLMModel, n.LLMProvider, n.ReasoningEffort, tt.model, tt.provider, tt.effort)
		}
	}
	// The stylesheet value remembers which declaration it came from.
	a := p.Node("critical").Attrs["llm_model"]
	if a.Source != FromStylesheet || a.Pos.Line != 7 {
		t.Errorf("critical llm_model = %+v, want stylesheet at line 7", a)
	}
}

func TestLoadStylesheetFallsBackToGraph(t *testing.T) {
	p, _ := load(t, `digraph G { llm_model="m-graph"; model_stylesheet=".x { llm_provider: p }"; a [class="x"]; b }`)
	if got := p.Node("b").LLMModel; got != "m-graph" {
		t.Errorf("b llm_model = %q, want graph value", got)
	}
	if got := p.Node("a").Attrs["llm_provider"].Source; got != FromStylesheet {
		t.Errorf("a llm_provider source = %s", got)
	}
}

func TestLoadGoalExpansionAndPromptFallback(t *testing.T) {
	p, _ := load(t, `digraph G {
		goal = "Create a hello world script"
		plan [prompt="Plan: $goal. Then $goal again."]
		labelled [label="Review the code"]
		bare
		gate [shape=diamond, label="ok?"]
	}`)
	tests := []struct{ id, prompt string }{
		{"plan", "Plan: Create a hello world script. Then Create a hello world script again."},
		{"labelled", "Review the code"},
		{"bare", "bare"},
		{"gate", ""},
	}
	for _, tt := range tests {
		if got := p.Node(tt.id).Prompt; got != tt.prompt {
			t.Errorf("%s prompt = %q, want %q", tt.id, got, tt.prompt)
		}
	}
	if p.Goal != "Create a hello world script" {
		t.Errorf("goal = %q", p.Goal)
	}
}

func TestLoadTypedAttributes(t *testing.T) {
	p, ds := load(t, `digraph G {
		graph [default_max_retry=2, failure_signature_limit=5, max_node_visits=100,
			retry.backoff.initial="2s", retry.backoff.factor=3, default_fidelity="compact",
			retry_target=a, fallback_retry_target=b]
		a [max_retries=4, goal_gate=true, retry_target=b, fallback_retry_target=a, timeout="1h30m",
		   allow_partial=true, auto_status=TRUE, max_node_visits=7, retry.backoff.max="10m",
		   retry.backoff.jitter=0.5, fidelity="summary:high", thread_id="t1", prompt="x"]
		b [prompt="y"]
		t [shape=parallelogram, tool_command="make lint", verify_command="git diff --exit-code"]
		v [shape=octagon, verify_command="go test ./..."]
		v2 [shape=octagon, command="go vet ./...", verify_command="ignored"]
		f [shape=tripleoctagon, join_policy=first_success]
		par [shape=component, max_parallel=2]
	}`)
	for _, d := range ds {
		if d.Rule == RuleAttrType {
			t.Errorf("unexpected %v", d)
		}
	}
	gotP := struct {
		DefaultMaxRetries, FailureSignatureLimit, MaxNodeVisits int
		Retry                                                   Backoff
		DefaultFidelity, RetryTarget, Fallback                  string
	}{p.DefaultMaxRetries, p.FailureSignatureLimit, p.MaxNodeVisits, p.Retry, p.DefaultFidelity, p.RetryTarget, p.FallbackRetryTarget}
	wantP := gotP
	wantP.DefaultMaxRetries, wantP.FailureSignatureLimit, wantP.MaxNodeVisits = 2, 5, 100
	wantP.Retry = Backoff{2 * time.Second, 3, time.Minute, 0.2}
	wantP.DefaultFidelity, wantP.RetryTarget, wantP.Fallback = "compact", "a", "b"
	if diff := cmp.Diff(gotP, wantP); diff != "" {
		t.Errorf("graph (-got +want):\n%s", diff)
	}
	a := p.Node("a")
	gotA := []any{a.MaxRetries, a.GoalGate, a.RetryTarget, a.FallbackRetryTarget, a.Timeout, a.AllowPartial,
		a.AutoStatus, a.MaxVisits, a.Retry, a.Fidelity, a.ThreadID}
	wantA := []any{4, true, "b", "a", 90 * time.Minute, true, true, 7,
		Backoff{2 * time.Second, 3, 10 * time.Minute, 0.5}, "summary:high", "t1"}
	if diff := cmp.Diff(gotA, wantA); diff != "" {
		t.Errorf("node a (-got +want):\n%s", diff)
	}
	if got := p.Node("b").MaxRetries; got != 2 {
		t.Errorf("b max_retries = %d, want graph default 2", got)
	}
	cmds := [][3]string{}
	for _, id := range []string{"t", "v", "v2"} {
		n := p.Node(id)
		cmds = append(cmds, [3]string{n.ToolCommand, n.Command, n.VerifyCommand})
	}
	wantCmds := [][3]string{{"make lint", "", "git diff --exit-code"}, {"", "go test ./...", ""}, {"", "go vet ./...", ""}}
	if diff := cmp.Diff(cmds, wantCmds); diff != "" {
		t.Errorf("commands (-got +want):\n%s", diff)
	}
	if f, par := p.Node("f"), p.Node("par"); f.JoinPolicy != "first_success" || par.JoinPolicy != "" || par.MaxParallel != 2 {
		t.Errorf("fan-in %q, parallel %q/%d", f.JoinPolicy, par.JoinPolicy, par.MaxParallel)
	}
}

func TestLoadDefaults(t *testing.T) {
	p, _ := load(t, `digraph G { a }`)
	if p.FailureSignatureLimit != 3 || p.DefaultMaxRetries != 0 || p.Retry != (Backoff{time.Second, 2, time.Minute, 0.2}) {
		t.Errorf("defaults: limit %d retries %d backoff %+v", p.FailureSignatureLimit, p.DefaultMaxRetries, p.Retry)
	}
	if n := p.Node("a"); n.MaxRetries != 0 || n.Retry != p.Retry || n.Label != "a" || n.Shape != "box" {
		t.Errorf("node defaults: %+v", n)
	}
	p, _ = load(t, `digraph G { default_max_retries=1; default_max_retry=5; a }`)
	if p.DefaultMaxRetries != 1 {
		t.Errorf("default_max_retries = %d, want the canonical key to win over the alias", p.DefaultMaxRetries)
	}
}

func TestLoadEdges(t *testing.T) {
	p, _ := load(t, `digraph G {
		a; b; c
		a -> b -> c [label="next", condition="outcome=ok", loop_restart=true, thread_id="t"]
	}`)
	if len(p.Edges) != 2 {
		t.Fatalf("%d edges, want 2", len(p.Edges))
	}
	e0, e1 := p.Edges[0], p.Edges[1]
	if e0.Condition == nil || e0.Condition != e1.Condition {
		t.Errorf("chained hops should share one parsed condition: %p %p", e0.Condition, e1.Condition)
	}
	want := &Condition{Source: "outcome=ok", Any: [][]Clause{{{"outcome", OpEq, "success"}}}}
	if diff := cmp.Diff(e0.Condition, want); diff != "" {
		t.Errorf("condition (-got +want):\n%s", diff)
	}
	if e1.Label != "next" || !e1.LoopRestart || e1.ThreadID != "t" {
		t.Errorf("edge b->c: %+v", e1)
	}
	if e1.FromPos != (dot.Pos{File: "t.dot", Line: 3, Col: 8}) || e1.Pos != (dot.Pos{File: "t.dot", Line: 3, Col: 13}) {
		t.Errorf("edge b->c positions %v %v", e1.FromPos, e1.Pos)
	}
	if got := len(p.Outgoing("b")); got != 1 {
		t.Errorf("Outgoing(b) = %d edges", got)
	}
	if got := p.Incoming("c"); len(got) != 1 || got[0] != e1 {
		t.Errorf("Incoming(c) = %v", got)
	}
}

func TestLoadUndeclaredNodesNotCreated(t *testing.T) {
	p, ds := load(t, `digraph G {
		start [shape=Mdiamond]; exit [shape=Msquare]
		start -> ghost -> exit
	}`)
	if p.Node("ghost") != nil || len(p.Nodes) != 2 {
		t.Errorf("ghost was created: %d nodes", len(p.Nodes))
	}
	want := []string{"reachability@2:27", "edge_target_exists@3:12"}
	if diff := cmp.Diff(rulesOf(ds), want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
}

func TestLoadValuePositions(t *testing.T) {
	_, ds := load(t, "digraph G {\n  start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit\n"+
		"  x [max_retries=abc, timeout=\"5x\", goal_gate=yes]\n"+
		"  start -> x [condition=\"outcome=success &&\n     context.n>3\"]\n"+
		"  graph [model_stylesheet=\"\n    * { llm_model: a; }\n    .c { llm_modl: b }\"]\n  x -> exit\n}")
	want := []string{
		"prompt_on_llm_nodes@3:3", "attr_type@3:18", "attr_type@3:31", "attr_type@3:47",
		"condition_syntax@5:15", "stylesheet_syntax@8:10",
	}
	got := rulesOf(ds)
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s\n%v", diff, ds)
	}
}

func TestLoadSyntaxError(t *testing.T) {
	p, ds, err := Load("ci.dot", []byte("digraph G {\n  a\n  b\n  c [label=\"x\" prompt=]\n}\n"))
	var de *dot.Error
	if p != nil || !errors.As(err, &de) {
		t.Fatalf("Load = %v, %v; want nil and a *dot.Error", p, err)
	}
	if len(ds) != 1 || ds[0].Rule != RuleSyntax || ds[0].Line != 4 || ds[0].Severity != SeverityError || ds[0].File != "ci.dot" {
		t.Errorf("diagnostics = %+v", ds)
	}
}

func TestLoadValidationError(t *testing.T) {
	p, ds, err := Load("t.dot", []byte(`digraph G { a }`))
	var ve *ValidationError
	if p == nil || !errors.As(err, &ve) || len(ve.Diagnostics) != ds.Count(SeverityError) {
		t.Fatalf("Load = %v, %v", p, err)
	}
	p, _, err = Load("t.dot", []byte(`digraph G { s [shape=Mdiamond]; e [shape=Msquare]; s -> e }`))
	if p == nil || err != nil {
		t.Errorf("clean pipeline: %v", err)
	}
}

func TestLoadStartExitByID(t *testing.T) {
	p, ds := load(t, `digraph G { node [shape=box]; start; end; start -> end }`)
	if p.Node("start").Kind != KindStart || p.Node("end").Kind != KindExit || ds.HasErrors() {
		t.Errorf("kinds %s %s, %v", p.Node("start").Kind, p.Node("end").Kind, ds)
	}
	p, _ = load(t, `digraph G { s [shape=Mdiamond]; start [prompt="x"]; s -> start }`)
	if p.Node("start").Kind != KindCodergen {
		t.Errorf("start beside an Mdiamond should stay codergen, got %s", p.Node("start").Kind)
	}
}
