package attractor

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// diagsOf returns the diagnostics of rule, as "rule@line:col message".
func diagsOf(ds Diagnostics, rule string) []string {
	var out []string
	for _, d := range ds {
		if d.Rule == rule {
			out = append(out, fmt.Sprintf("%s@%d:%d %s", d.Rule, d.Line, d.Col, d.Message))
		}
	}
	return out
}

// Each construct of another engine that means something else here, or
// that kilroy-bot does not run, is an error at its position naming the
// construct, the engine and the rewrite.
func TestDialectForeign(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want, fix  string // want: "line:col" and a part of the message
	}{
		{"Fabro insulator", `wait [shape=insulator, duration="2m"]; start -> wait -> done`,
			`4:13 node "wait": shape=insulator is Fabro's timed wait`, `wait [shape=parallelogram, tool_command="sleep 120"]`},
		{"Fabro tab", `ask [shape=tab, prompt="Summarise"]; start -> ask -> done`,
			`4:12 node "ask": shape=tab is Fabro's prompt node (one model call without tools)`, "write ask [shape=box]"},
		{"Fabro type=wait", `wait [type="wait", duration="5s"]; start -> wait -> done`,
			`4:12 node "wait": type="wait" is Fabro's timed wait`, `tool_command="sleep 5"`},
		{"Fabro type=pull_request", `pr [type="pull_request"]; start -> pr -> done`,
			`4:10 node "pr": type="pull_request" is Fabro's draft pull request step`, "remove the node"},
		{"Fabro language=python", `gen [shape=parallelogram, script="print(1)", language="python"]; start -> gen -> done`,
			`4:55 node "gen": language="python" is Fabro's: the script would run as a shell command here`, `tool_command="python script.py"`},
		{"Fabro selection=random", `pick [shape=parallelogram, tool_command="true", selection="random"]; a [shape=parallelogram, tool_command="true"]
start -> pick; pick -> a [weight=3]; pick -> done; a -> done`,
			`4:59 node "pick": selection="random" is Fabro's weighted random choice`, "remove it"},
		{"allouis type=subgraph", `review [type="subgraph", graph_ref="../review-core/pipeline.dot"]; start -> review -> done`,
			`4:14 node "review": type="subgraph" is allouis/attractor's static sub-pipeline`,
			`review [shape=house, stack.child_dotfile="../review-core/pipeline.dot"]`},
		{"samueljklee house as a human gate", `approve [shape=house, label="Approve?"]; fix [prompt="x"]
start -> approve; approve -> done [label="Approve"]; approve -> fix [label="Revise"]; fix -> approve`,
			`4:16 node "approve": shape=house with labelled choices and no stack.child_dotfile is samueljklee's human gate`,
			"write approve [shape=hexagon]"},
		{"samueljklee house with a default choice", `approve [shape=house, default_choice="Approve"]; start -> approve -> done`,
			`4:16 node "approve": shape=house with labelled choices`, "write approve [shape=hexagon]"},
		{"samueljklee hexagon as a manager", `sup [shape=hexagon, stack.child_dotfile="child.dot"]; start -> sup -> done`,
			`4:12 node "sup": shape=hexagon with stack.child_dotfile is samueljklee's manager`, "write sup [shape=house]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := load(t, "digraph G {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n"+tc.body+"\n}")
			got := diagsOf(ds, RuleDialectForeign)
			if len(got) != 1 || !strings.HasPrefix(got[0], "dialect_foreign@"+tc.want) {
				t.Fatalf("dialect_foreign = %q, want one at %s\nall: %v", got, tc.want, ds)
			}
			for _, d := range ds {
				if d.Rule == RuleDialectForeign && (d.Severity != SeverityError || !strings.Contains(d.Fix, tc.fix)) {
					t.Errorf("severity %s fix %q, want error with %q", d.Severity, d.Fix, tc.fix)
				}
				if d.Rule == RuleShapeAgent || d.Rule == RuleTypeKnown || d.Rule == RulePromptOnLLMNodes {
					t.Errorf("%s reported beside dialect_foreign: %s", d.Rule, d)
				}
			}
		})
	}
}

// The spec's own constructs are not mistaken for another engine's.
func TestDialectForeignNotOurs(t *testing.T) {
	for _, body := range []string{
		`ask [shape=hexagon]; start -> ask; ask -> done [label="Approve"]; ask -> start2 [label="Revise"]; start2 [prompt="x"]; start2 -> done`,
		`loop [shape=house, stack.child_dotfile="child.dot"]; start -> loop; loop -> done [label="A"]; loop -> done [label="B"]`,
		`stack.child_dotfile="child.dot"; loop [shape=house]; start -> loop; loop -> done [label="A"]; loop -> done [label="B"]`,
		`language="Go"; work [prompt="x"]; start -> work -> done`,
	} {
		_, ds := load(t, "digraph G {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n"+body+"\n}")
		if got := diagsOf(ds, RuleDialectForeign); got != nil {
			t.Errorf("%s: %v", body, got)
		}
	}
}

// A shape another engine defines is never run as a coding agent, even by
// a host that skips validation: it selects no handler and fails.
func TestForeignShapeNeverRunsAsAgent(t *testing.T) {
	p := loadAnyway(t, `digraph G {
	start [shape=Mdiamond]; done [shape=Msquare]
	wait [shape=insulator, duration="1s"]
	start -> wait -> done
}`)
	h := newHarness(t)
	agent := &scriptedAgent{calls: map[string]int{}}
	h.cfg.Agent = agent
	res := h.run(p)
	if res.Status != StatusFail || agent.calls["wait"] != 0 || !strings.Contains(res.FailureReason, "selects no handler") {
		t.Errorf("run = %s %q, agent calls %v; want a failure without an agent call", res.Status, res.FailureReason, agent.calls)
	}
}

// Constructs that mean the same here are read as ours with a warning at
// their position.
func TestDialectAliasConstructs(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		check     func(p *Pipeline) string
		want      string
		diags     []string
	}{
		{
			name:  "stylesheet model is llm_model",
			src:   "model_stylesheet=\"* { model: claude-opus-4-6; }\"\nwork [prompt=\"x\"]; start -> work -> done",
			check: func(p *Pipeline) string { return p.Node("work").LLMModel },
			want:  "claude-opus-4-6",
			diags: []string{"dialect_alias@4:23 stylesheet property model is Fabro's name for llm_model: read as llm_model"},
		},
		{
			name:  "script on a parallelogram is tool_command",
			src:   `gen [shape=parallelogram, script="make gen"]; start -> gen -> done`,
			check: func(p *Pipeline) string { return fmt.Sprint(p.Node("gen").Kind, " ", p.Node("gen").ToolCommand) },
			want:  "tool make gen",
			diags: []string{"attr_alias@4:27 script is Fabro's name for tool_command; read as tool_command"},
		},
		{
			name:  "script without a shape is a command, as Fabro runs it",
			src:   `gen [script="make gen"]; start -> gen -> done`,
			check: func(p *Pipeline) string { return fmt.Sprint(p.Node("gen").Kind, " ", p.Node("gen").ToolCommand) },
			want:  "tool make gen",
			diags: []string{
				`attr_alias@4:6 script is Fabro's name for tool_command; read as tool_command`,
				`dialect_alias@4:6 node "gen" has script= and no shape: Fabro runs it as a command, and so does kilroy-bot (shape=parallelogram)`,
			},
		},
		{
			name: "fractional weights compare as numbers",
			src:  `a [prompt="a"]; b [prompt="b"]; start -> a [weight="2.5"]; start -> b [weight=2.0]; a -> done; b -> done`,
			check: func(p *Pipeline) string {
				return fmt.Sprint(p.Outgoing("start")[0].Weight, " ", p.Outgoing("start")[1].Weight)
			},
			want: "2.5 2",
			diags: []string{
				"dialect_alias@4:52 weight=2.5 is a fractional weight (samueljklee, Fabro): compared as the number 2.5",
				"dialect_alias@4:79 weight=2.0 is a fractional weight (samueljklee, Fabro): compared as the number 2",
			},
		},
		{
			name: "max_visits names its engines",
			src:  `work [prompt="x", max_visits=3]; start -> work -> done`,
			check: func(p *Pipeline) string {
				return fmt.Sprint(p.Node("work").MaxVisits, " ", p.Node("work").MaxVisitsAttr)
			},
			want:  "3 max_visits",
			diags: []string{"attr_alias@4:19 max_visits is tracker and Fabro's name for max_node_visits; read as max_node_visits"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ds := load(t, "digraph G {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n"+tc.src+"\n}")
			if ds.HasErrors() {
				t.Fatalf("errors: %v", ds.Errors())
			}
			if got := tc.check(p); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			got := append(diagsOf(ds, RuleAttrAlias), diagsOf(ds, RuleDialectAlias)...)
			if len(got) != len(tc.diags) {
				t.Fatalf("diagnostics %q, want %q", got, tc.diags)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tc.diags[i]) {
					t.Errorf("diagnostic %q, want prefix %q", got[i], tc.diags[i])
				}
			}
		})
	}
}

// A fractional weight orders edges as the number it is: 2.5 beats 2.
func TestRunFractionalWeight(t *testing.T) {
	h := newHarness(t)
	res := h.run(mustLoad(t, `digraph G {
	start [shape=Mdiamond]; done [shape=Msquare]
	a [shape=parallelogram, tool_command="true"]; b [shape=parallelogram, tool_command="true"]
	start -> a [weight=2]; start -> b [weight="2.5"]; a -> done; b -> done
}`))
	if diff := cmp.Diff(res.Completed, []string{"start", "b", "done"}); diff != "" {
		t.Errorf("path (-got +want):\n%s", diff)
	}
}

// A Fabro command node written with script= and no shape runs its script.
func TestRunFabroScriptNode(t *testing.T) {
	h := newHarness(t)
	agent := &scriptedAgent{calls: map[string]int{}}
	h.cfg.Agent = agent
	res := h.run(mustLoad(t, `digraph G {
	start [shape=Mdiamond]; done [shape=Msquare]
	gen [script="echo '{\"status\":\"fail\",\"failure_reason\":\"ran the script\"}' > $KILROY_STAGE_STATUS_PATH"]
	start -> gen -> done
}`))
	if res.Status != StatusFail || !strings.Contains(res.FailureReason, "ran the script") || len(agent.calls) != 0 {
		t.Errorf("run = %s %q, agent calls %v; want the script's failure", res.Status, res.FailureReason, agent.calls)
	}
}
