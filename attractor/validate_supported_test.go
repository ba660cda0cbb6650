package attractor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateHandlerSupported: a manager loop is reported before the run,
// at the node, however it is selected; only a host that registered a
// handler for the kind may use it.
func TestValidateHandlerSupported(t *testing.T) {
	const msg = `node "loop": shape=house is the spec's manager loop (stack.manager_loop, §4.11), which kilroy-bot does not run; a run would fail at this node`
	const fix = `write the loop with edges: replace loop with the steps it supervises, e.g. work [prompt="...", max_node_visits=5]  (manager.max_cycles); ` +
		`check [shape=octagon, command="..."]  (the stop condition); work -> check; check -> NEXT [condition="outcome=success"]; check -> work [condition="outcome=fail"]`
	want := func(line, col int) []Diagnostic {
		return []Diagnostic{{Rule: RuleHandlerSupported, Severity: SeverityError, File: "ci.dot",
			Line: line, Col: col, Node: "loop", Message: msg, Fix: fix}}
	}
	tests := []struct {
		name  string
		src   string
		types []string
		want  []Diagnostic
	}{
		{"shape=house", "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n    loop [shape=house]\n  start -> loop -> exit\n}\n",
			nil, want(4, 5)},
		{"type=stack.manager_loop", "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  loop [type=\"stack.manager_loop\"]\n  start -> loop -> exit\n}\n",
			nil, want(4, 3)},
		{"shape from a node default", "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  subgraph s { node [shape=house]; loop }\n  start -> loop -> exit\n}\n",
			nil, want(4, 36)},
		{"host registered a handler", "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  loop [shape=house]\n  start -> loop -> exit\n}\n",
			[]string{"stack.manager_loop"}, nil},
		{"other kinds", "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  loop [shape=hexagon]\n  start -> loop -> exit\n}\n",
			nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, ds, err := Load("ci.dot", []byte(tt.src), WithHandlerTypes(tt.types...))
			var got []Diagnostic
			for _, d := range ds {
				if d.Rule == RuleHandlerSupported {
					got = append(got, d)
				}
			}
			if diff := cmp.Diff(got, tt.want); diff != "" {
				t.Errorf("diagnostics (-got +want):\n%s", diff)
			}
			var ve *ValidationError
			if isErr := errors.As(err, &ve); isErr != (tt.want != nil) {
				t.Errorf("Load error = %v, want a ValidationError: %v", err, tt.want != nil)
			}
		})
	}
}

// A pipeline built by hand (no shape) is checked by kind.
func TestValidateHandlerSupportedHandBuilt(t *testing.T) {
	p := handBuilt([]*Node{{ID: "start", Kind: KindStart}, {ID: "loop", Kind: KindManagerLoop}, {ID: "exit", Kind: KindExit}},
		&Edge{From: "start", To: "loop"}, &Edge{From: "loop", To: "exit"})
	if diff := cmp.Diff(ruleIDs(Validate(p)), []string{"handler_supported:loop"}); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
}
