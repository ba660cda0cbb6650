package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The spec's parity matrix rows about parsing and validation, and its
// example pipelines, each as a named test.

func edgeList(p *Pipeline) []string {
	var out []string
	for _, e := range p.Edges {
		out = append(out, e.From+"->"+e.To)
	}
	return out
}

func TestParity_ParseSimpleLinear(t *testing.T) {
	p, ds := load(t, `digraph Simple {
		graph [goal="Run tests and report"]
		rankdir=LR
		start [shape=Mdiamond, label="Start"]
		exit  [shape=Msquare, label="Exit"]
		run_tests [label="Run Tests", prompt="Run the test suite and report results"]
		report    [label="Report", prompt="Summarize the test results"]
		start -> run_tests -> report -> exit
	}`)
	if len(ds) != 0 {
		t.Errorf("diagnostics: %v", ds)
	}
	if diff := cmp.Diff(edgeList(p), []string{"start->run_tests", "run_tests->report", "report->exit"}); diff != "" {
		t.Errorf("edges (-got +want):\n%s", diff)
	}
	if p.Goal != "Run tests and report" || p.Attrs.str("rankdir") != "LR" || p.Name != "Simple" {
		t.Errorf("graph: goal %q rankdir %q name %q", p.Goal, p.Attrs.str("rankdir"), p.Name)
	}
}

func TestParity_ParseGraphAttributes(t *testing.T) {
	p, _ := load(t, `digraph G {
		graph [goal="Implement feature X", label="Feature X"]
		model_stylesheet="* { llm_model: m; }"
		start [shape=Mdiamond]; exit [shape=Msquare]; start -> exit
	}`)
	got := []string{p.Goal, p.Label, p.Attrs.str("model_stylesheet")}
	want := []string{"Implement feature X", "Feature X", "* { llm_model: m; }"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("graph attributes (-got +want):\n%s", diff)
	}
	if len(p.Stylesheet) != 1 {
		t.Errorf("stylesheet rules = %d, want 1", len(p.Stylesheet))
	}
}

func TestParity_ParseMultiLineNodeAttributes(t *testing.T) {
	p, _ := load(t, `digraph G {
		review_gate [
			shape=hexagon,
			label="Review Changes",
			type="wait.human",
			prompt="Line one
line two"
		]
	}`)
	n := p.Node("review_gate")
	got := []string{n.Shape, n.Label, string(n.Kind), n.Prompt}
	want := []string{"hexagon", "Review Changes", "wait.human", "Line one\nline two"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("node (-got +want):\n%s", diff)
	}
}

func TestParity_ValidateMissingStart(t *testing.T) {
	_, ds := load(t, `digraph G { work [prompt="x"]; exit [shape=Msquare]; work -> exit }`)
	if !hasRuleSeverity(ds, RuleStartNode, SeverityError) {
		t.Errorf("want a start_node error, got %v", ds)
	}
}

func TestParity_ValidateMissingExit(t *testing.T) {
	_, ds := load(t, `digraph G { start [shape=Mdiamond]; work [prompt="x"]; start -> work }`)
	if !hasRuleSeverity(ds, RuleTerminalNode, SeverityError) {
		t.Errorf("want a terminal_node error, got %v", ds)
	}
}

func TestParity_ValidateOrphanNode(t *testing.T) {
	_, ds := load(t, `digraph G {
		start [shape=Mdiamond]; exit [shape=Msquare]; orphan [prompt="x"]
		start -> exit
	}`)
	want := Diagnostics{{Rule: RuleReachability, Severity: SeverityError, File: "t.dot", Line: 2, Col: 49, Node: "orphan",
		Message: `node "orphan" is not reachable from start node "start"`,
		Fix:     "add an edge into orphan from a step before it, or delete the node"}}
	if diff := cmp.Diff(ds, want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
}

func TestParity_StylesheetByShape(t *testing.T) {
	p, _ := load(t, `digraph G {
		model_stylesheet="box { llm_model: \"claude-opus-4-6\" } hexagon { llm_model: h }"
		a [prompt="x"]; b [shape=parallelogram, tool_command="true"]; c [shape=hexagon]
	}`)
	got := []string{p.Node("a").LLMModel, p.Node("b").LLMModel, p.Node("c").LLMModel}
	if diff := cmp.Diff(got, []string{"claude-opus-4-6", "", "h"}); diff != "" {
		t.Errorf("models (-got +want):\n%s", diff)
	}
}

func TestParity_PromptGoalExpansion(t *testing.T) {
	p, _ := load(t, `digraph G { graph [goal="Create a hello world Python script"]; plan [prompt="Plan for: $goal"] }`)
	if got := p.Node("plan").Prompt; got != "Plan for: Create a hello world Python script" {
		t.Errorf("prompt = %q", got)
	}
}

func TestParity_CustomHandlerRegistration(t *testing.T) {
	src := `digraph G { start [shape=Mdiamond]; x [type="my.custom"]; exit [shape=Msquare]; start -> x -> exit }`
	_, ds := load(t, src)
	if !hasRuleSeverity(ds, RuleTypeKnown, SeverityWarning) {
		t.Errorf("unregistered type: want type_known, got %v", ds)
	}
	p, ds := load(t, src, WithHandlerTypes("my.custom"))
	if len(ds) != 0 || p.Node("x").Kind != "my.custom" {
		t.Errorf("registered type: kind %s, diagnostics %v", p.Node("x").Kind, ds)
	}
}

func TestParity_TenPlusNodes(t *testing.T) {
	var b strings.Builder
	b.WriteString("digraph G {\n start [shape=Mdiamond]\n exit [shape=Msquare]\n")
	prev := "start"
	for i := range 12 {
		fmt.Fprintf(&b, " n%d [prompt=\"step %d\"]\n %s -> n%d\n", i, i, prev, i)
		prev = fmt.Sprintf("n%d", i)
	}
	fmt.Fprintf(&b, " %s -> exit\n}\n", prev)
	p, ds := load(t, b.String())
	if len(ds) != 0 || len(p.Nodes) != 14 || len(p.Edges) != 13 {
		t.Errorf("%d nodes %d edges, diagnostics %v", len(p.Nodes), len(p.Edges), ds)
	}
}

func TestSpecExample_Branching(t *testing.T) {
	p, ds := load(t, `digraph Branch {
		graph [goal="Implement and validate a feature"]
		rankdir=LR
		node [shape=box, timeout="900s"]
		start     [shape=Mdiamond, label="Start"]
		exit      [shape=Msquare, label="Exit"]
		plan      [label="Plan", prompt="Plan the implementation"]
		implement [label="Implement", prompt="Implement the plan"]
		validate  [label="Validate", prompt="Run tests"]
		gate      [shape=diamond, label="Tests passing?"]
		start -> plan -> implement -> validate -> gate
		gate -> exit      [label="Yes", condition="outcome=success"]
		gate -> implement [label="No", condition="outcome!=success"]
	}`)
	// The spec's example loops a failure back without a failure-class
	// guard, which is exactly what the guard rule is for.
	want := []string{"fail_loop_failure_class_guard@13:44"}
	if diff := cmp.Diff(rulesOf(ds), want); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
	if len(p.Nodes) != 6 || len(p.Edges) != 6 || p.Node("plan").Timeout.Seconds() != 900 {
		t.Errorf("%d nodes, %d edges", len(p.Nodes), len(p.Edges))
	}
}

func TestSpecExample_HumanGate(t *testing.T) {
	// As printed in the spec, ship_it and fixes are only named by edges.
	// Here an edge never declares a node, so the example reports them.
	src := `digraph Review {
		rankdir=LR
		start [shape=Mdiamond, label="Start"]
		exit  [shape=Msquare, label="Exit"]
		review_gate [shape=hexagon, label="Review Changes", type="wait.human"]
		%s
		start -> review_gate
		review_gate -> ship_it [label="[A] Approve"]
		review_gate -> fixes   [label="[F] Fix"]
		ship_it -> exit
		fixes -> review_gate
	}`
	_, ds := load(t, fmt.Sprintf(src, ""))
	want := []string{"edge_target_exists@8:18", "edge_target_exists@9:18", "reachability@4:3",
		"edge_target_exists@10:3", "edge_target_exists@11:3"}
	got := rulesOf(ds)
	if diff := cmp.Diff(got, want, sortStrings()); diff != "" {
		t.Errorf("as printed (-got +want):\n%s", diff)
	}
	p, ds := load(t, fmt.Sprintf(src, `ship_it [prompt="Ship it"]; fixes [prompt="Apply the fixes"]`))
	if len(ds) != 0 || p.Node("review_gate").Kind != KindWaitHuman {
		t.Errorf("declared: %v", ds)
	}
}

func TestSpecExample_SmokePipeline(t *testing.T) {
	p, ds := load(t, `digraph test_pipeline {
		graph [goal="Create a hello world Python script"]

		start       [shape=Mdiamond]
		plan        [shape=box, prompt="Plan how to create a hello world script for: $goal"]
		implement   [shape=box, prompt="Write the code based on the plan", goal_gate=true]
		review      [shape=box, prompt="Review the code for correctness"]
		done        [shape=Msquare]

		start -> plan
		plan -> implement
		implement -> review [condition="outcome=success"]
		implement -> plan   [condition="outcome=fail", label="Retry"]
		review -> done      [condition="outcome=success"]
		review -> implement [condition="outcome=fail", label="Fix"]
	}`)
	if p.Goal != "Create a hello world Python script" || len(p.Nodes) != 5 || len(p.Edges) != 6 {
		t.Fatalf("goal %q, %d nodes, %d edges", p.Goal, len(p.Nodes), len(p.Edges))
	}
	if ds.HasErrors() {
		t.Errorf("errors: %v", ds.Errors())
	}
	if diff := cmp.Diff(rulesOf(ds), []string{"goal_gate_has_retry@6:80"}); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
	if got := p.Node("plan").Prompt; got != "Plan how to create a hello world script for: Create a hello world Python script" {
		t.Errorf("plan prompt = %q", got)
	}
	if !p.Node("implement").GoalGate || p.Node("done").Kind != KindExit {
		t.Error("implement should be a goal gate and done the exit")
	}
}

func TestSpecExample_Stylesheet(t *testing.T) {
	p, ds := load(t, `digraph Pipeline {
		graph [
			goal="Implement feature X",
			model_stylesheet="
				* { llm_model: claude-sonnet-4-5; llm_provider: anthropic; }
				.code { llm_model: claude-opus-4-6; llm_provider: anthropic; }
				#critical_review { llm_model: gpt-5.2; llm_provider: openai; reasoning_effort: high; }
			"
		]
		start [shape=Mdiamond]
		exit  [shape=Msquare]
		plan            [label="Plan", class="planning"]
		implement       [label="Implement", class="code"]
		critical_review [label="Critical Review", class="code"]
		start -> plan -> implement -> critical_review -> exit
	}`)
	if len(ds) != 0 {
		t.Errorf("diagnostics: %v", ds)
	}
	var got []string
	for _, id := range []string{"plan", "implement", "critical_review"} {
		n := p.Node(id)
		got = append(got, n.LLMModel+"/"+n.LLMProvider+"/"+n.ReasoningEffort)
	}
	want := []string{"claude-sonnet-4-5/anthropic/", "claude-opus-4-6/anthropic/", "gpt-5.2/openai/high"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("models (-got +want):\n%s", diff)
	}
}

func hasRuleSeverity(ds Diagnostics, rule string, s Severity) bool {
	for _, d := range ds {
		if d.Rule == rule && d.Severity == s {
			return true
		}
	}
	return false
}
