package attractor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateManagerLoopNeedsChild: a manager loop runs (it is no longer
// handler_supported), and one without a child pipeline is reported before
// the run, at the node, however it is selected; a host that registered a
// handler for the kind runs its own.
func TestValidateManagerLoopNeedsChild(t *testing.T) {
	const msg = `node "loop": a manager loop runs the child pipeline stack.child_dotfile names: stack.child_dotfile is not set`
	const fix = `set stack.child_dotfile to the child's path from the repository root, e.g. stack.child_dotfile=".kilroy/child.dot"`
	want := func(line, col int) []Diagnostic {
		return []Diagnostic{{Rule: RuleManagerChild, Severity: SeverityError, File: "ci.dot",
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
		{"child on the node", "digraph ci {\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  loop [shape=house, stack.child_dotfile=\"c.dot\"]\n  start -> loop -> exit\n}\n",
			nil, nil},
		{"child on the graph", "digraph ci {\n  stack.child_dotfile=\"c.dot\"\n  start [shape=Mdiamond]\n  exit [shape=Msquare]\n  loop [shape=house]\n  start -> loop -> exit\n}\n",
			nil, nil},
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
				if d.Rule == RuleManagerChild || d.Rule == RuleHandlerSupported {
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
func TestValidateManagerLoopHandBuilt(t *testing.T) {
	p := handBuilt([]*Node{{ID: "start", Kind: KindStart}, {ID: "loop", Kind: KindManagerLoop}, {ID: "exit", Kind: KindExit}},
		&Edge{From: "start", To: "loop"}, &Edge{From: "loop", To: "exit"})
	if diff := cmp.Diff(ruleIDs(Validate(p)), []string{"manager_child:loop"}); diff != "" {
		t.Errorf("diagnostics (-got +want):\n%s", diff)
	}
}
