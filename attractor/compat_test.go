package attractor

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestForeignSpellings holds other engines' attributes, durations and
// shapes to what they mean there.
func TestForeignSpellings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes string // statements inside digraph, start and done declared
		check func(p *Pipeline) string
		want  string
		rules []string
	}{
		{
			name:  "llm_prompt is the prompt",
			want:  "Implement the plan",
			nodes: `work [label="Work", llm_prompt="Implement the plan"]; start -> work -> done`,
			check: func(p *Pipeline) string { return p.Node("work").Prompt },
			rules: []string{"attr_alias@4:21"},
		},
		{
			name:  "prompt wins over llm_prompt on one statement",
			want:  "ours",
			nodes: `work [llm_prompt="theirs", prompt="ours"]; start -> work -> done`,
			check: func(p *Pipeline) string { return p.Node("work").Prompt },
			rules: []string{"attr_alias@4:7"},
		},
		{
			name:  "max_visits is max_node_visits",
			want:  "3",
			nodes: `work [prompt="x", max_visits=3]; start -> work -> done`,
			check: func(p *Pipeline) string { return fmt.Sprint(p.Node("work").MaxVisits) },
			rules: []string{"attr_alias@4:19"},
		},
		{
			name:  "default_choice is human.default_choice",
			want:  "A",
			nodes: `ask [shape=hexagon, default_choice="A"]; start -> ask; ask -> done [label="A"]`,
			check: func(p *Pipeline) string { return p.Node("ask").Attrs.str("human.default_choice") },
			rules: []string{"attr_alias@4:21"},
		},
		{
			name:  "bare integer timeout is seconds",
			want:  fmt.Sprint(600*time.Second, " ", 90*time.Second),
			nodes: `work [prompt="x", timeout=600]; t2 [prompt="y", timeout="90"]; start -> work -> t2 -> done`,
			check: func(p *Pipeline) string { return fmt.Sprint(p.Node("work").Timeout, p.Node("t2").Timeout) },
			rules: []string{"duration_unit@4:27", "duration_unit@4:57"},
		},
		{
			name:  "Kilroy circle and doublecircle",
			want:  "start exit",
			nodes: `s0 [shape=circle]; d0 [shape=doublecircle]; s0 -> d0; start -> done`,
			check: func(p *Pipeline) string { return fmt.Sprint(p.Node("s0").Kind, " ", p.Node("d0").Kind) },
			rules: []string{"start_node@4:1"},
		},
		{
			name:  "unknown shape runs as an agent",
			want:  "codergen Do it",
			nodes: `work [shape=rectangle, label="Do it"]; start -> work -> done`,
			check: func(p *Pipeline) string { return fmt.Sprint(p.Node("work").Kind, " ", p.Node("work").Prompt) },
			rules: []string{"shape_agent@4:13"},
		},
		{
			name:  "near-miss shape is an error",
			want:  "",
			nodes: `work [shape=diamon, label="x"]; start -> work -> done`,
			check: func(p *Pipeline) string { return "" },
			rules: []string{"shape_known@4:13"},
		},
		{
			name:  "Kilroy loop sentinel refused",
			want:  "",
			nodes: `lb [shape=trapezium]; start -> lb -> done`,
			check: func(p *Pipeline) string { return "" },
			rules: []string{"handler_supported@4:11"},
		},
		{
			name:  "misspelt edge attribute",
			want:  "",
			nodes: `start -> done [condtion="outcome=success"]`,
			check: func(p *Pipeline) string { return "" },
			rules: []string{"attr_known@4:16"},
		},
		{
			name:  "Kilroy attribute named, drawing attribute silent",
			want:  "",
			nodes: `work [prompt="x", is_codergen=true, color=red]; start -> work -> done`,
			check: func(p *Pipeline) string { return "" },
			rules: []string{"attr_known@4:19"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, ds := load(t, "digraph G {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n"+tc.nodes+"\n}")
			if got := tc.check(p); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if diff := cmp.Diff(rulesOf(ds), tc.rules); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s\n%v", diff, ds)
			}
		})
	}
}

func TestExitReachable(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"dead end", `start -> work; work [prompt="x"]; start -> done`, []string{"exit_reachable@4:16"}},
		{"closed loop", "a [prompt=\"x\"]; b [prompt=\"y\"]\nstart -> a -> b -> a\nstart -> done",
			[]string{"exit_reachable@4:1"}},
		{"self-loop bounded by a visit limit still never ends well", "a [prompt=\"x\", max_node_visits=3]\nstart -> a -> a\nstart -> done",
			[]string{"exit_reachable@4:1"}},
		{"node leading into a closed loop is not reported twice", "a [prompt=\"x\"]; b [prompt=\"y\"]; c [prompt=\"z\"]\nstart -> c -> a -> b -> a\nstart -> done",
			[]string{"exit_reachable@4:1"}},
		{"loop with a way out", "a [prompt=\"x\"]; b [prompt=\"y\"]\nstart -> a -> b -> a\nb -> done [condition=\"outcome=success\"]", nil},
		{"unreachable dead end left to reachability", `orphan [prompt="x"]; start -> done`, []string{"reachability@4:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := load(t, "digraph G {\nstart [shape=Mdiamond]\ndone [shape=Msquare]\n"+tc.body+"\n}")
			var got []string
			for _, r := range rulesOf(ds) {
				if strings.HasPrefix(r, "exit_reachable") || strings.HasPrefix(r, "reachability") {
					got = append(got, r)
				}
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s\n%v", diff, ds)
			}
		})
	}
}

func TestMissingStartPointsAtLikelyStart(t *testing.T) {
	_, ds := load(t, "digraph G {\n  begin [shape=circl]\n  done [shape=Msquare]\n  begin -> done\n}")
	var got []string
	for _, d := range ds {
		if d.Rule == RuleStartNode {
			got = append(got, fmt.Sprintf("%d:%d %s", d.Line, d.Col, d.Message))
		}
	}
	want := []string{`2:16 pipeline has no start node; "begin" has no incoming edge and shape=circl`}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("start_node (-got +want):\n%s", diff)
	}
}
