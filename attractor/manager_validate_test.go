package attractor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestValidateManagerChild(t *testing.T) {
	parent := func(attrs string) string {
		return "digraph ci {\n  start [shape=Mdiamond]\n  loop [shape=house, " + attrs + "]\n  exit [shape=Msquare]\n  start -> loop -> exit\n}\n"
	}
	nest := func(file, next string) string {
		return "digraph c {\n  start [shape=Mdiamond]\n  deeper [shape=house, stack.child_dotfile=\"" + next + "\"]\n  exit [shape=Msquare]\n  start -> deeper -> exit\n}\n"
	}
	tests := []struct {
		name  string
		attrs string
		files map[string]string
		want  []string // rule: message fragment
	}{
		{"valid child", `stack.child_dotfile="kids/ok.dot"`, map[string]string{"kids/ok.dot": childThreeSteps}, nil},
		{"not there yet", `stack.child_dotfile="kids/later.dot"`, nil,
			[]string{"manager_loop: the child pipeline kids/later.dot does not exist now"}},
		{"invalid child", `stack.child_dotfile="kids/bad.dot"`, map[string]string{"kids/bad.dot": "digraph c { a -> b }"},
			[]string{"manager_child: the child pipeline kids/bad.dot does not validate"}},
		{"syntax error", `stack.child_dotfile="kids/bad.dot"`, map[string]string{"kids/bad.dot": "digraph c {"},
			[]string{"manager_child: the child pipeline kids/bad.dot does not validate"}},
		{"out of the repository", `stack.child_dotfile="../x.dot"`, nil,
			[]string{`manager_child: stack.child_dotfile "../x.dot" leads out of the repository`}},
		{"absolute", `stack.child_dotfile="/etc/x.dot"`, nil,
			[]string{`manager_child: stack.child_dotfile "/etc/x.dot" is not a path relative`}},
		{"directory", `stack.child_dotfile="kids"`, map[string]string{"kids/x": ""},
			[]string{"manager_child: the child pipeline kids cannot be read"}},
		{"nests itself", `stack.child_dotfile="kids/self.dot"`, map[string]string{"kids/self.dot": nest("kids/self.dot", "kids/self.dot")},
			[]string{"manager_child: the child pipeline kids/self.dot does not validate", "manager_child: nest 5 deep here, over the limit of 4"}},
		{"nests within the bound", `stack.child_dotfile="k/1.dot"`, map[string]string{
			"k/1.dot": nest("k/1.dot", "k/2.dot"), "k/2.dot": nest("k/2.dot", "k/3.dot"), "k/3.dot": childThreeSteps}, nil},
		{"steer", `stack.child_dotfile="kids/ok.dot", manager.actions="observe,steer"`, map[string]string{"kids/ok.dot": childThreeSteps},
			[]string{"manager_loop: node \"loop\": manager.actions steer is refused"}},
		{"unknown action", `stack.child_dotfile="kids/ok.dot", manager.actions="observe,waitt"`, map[string]string{"kids/ok.dot": childThreeSteps},
			[]string{`manager_loop: node "loop": unknown manager action "waitt"`}},
		{"bad stop condition", `stack.child_dotfile="kids/ok.dot", manager.stop_condition="context.x=="`, map[string]string{"kids/ok.dot": childThreeSteps},
			[]string{"condition_syntax: node \"loop\": manager.stop_condition"}},
		{"unknown manager attribute", `stack.child_dotfile="kids/ok.dot", manager.stop="x"`, map[string]string{"kids/ok.dot": childThreeSteps},
			[]string{`attr_known: unknown node attribute "manager.stop": nothing reads it; did you mean "manager.stop_condition"?`}},
		{"autostart off", `stack.child_dotfile="kids/ok.dot", stack.child_autostart=false`, map[string]string{"kids/ok.dot": childThreeSteps},
			[]string{"manager_loop: stack.child_autostart=false is ignored"}},
		{"spec attributes", `stack.child_dotfile="kids/ok.dot", manager.poll_interval="30s", manager.max_cycles=5, manager.stop_condition="context.stack.child.status=completed", stack.child_autostart=true, manager.actions="observe,wait"`,
			map[string]string{"kids/ok.dot": childThreeSteps}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := t.TempDir()
			for name, src := range tt.files {
				p := filepath.Join(repo, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, ds, _ := Load("ci.dot", []byte(parent(tt.attrs)), WithRepoDir(repo))
			var got []Diagnostic
			for _, d := range ds {
				if d.Rule == RuleManagerChild || d.Rule == RuleManagerLoop || d.Rule == RuleConditionSyntax || d.Rule == RuleAttrKnown {
					got = append(got, d)
				}
			}
			if tt.want == nil && len(got) > 0 {
				t.Fatalf("unexpected diagnostics:\n%s", formatDiags(got))
			}
			for _, w := range tt.want {
				rule, frag, _ := strings.Cut(w, ": ")
				if !slices.ContainsFunc(got, func(d Diagnostic) bool { return d.Rule == rule && strings.Contains(d.Message, frag) }) {
					t.Errorf("diagnostics:\n%swant a %s diagnostic containing %q", formatDiags(got), rule, frag)
				}
			}
		})
	}
}

func TestValidateManagerChildSymlinkOut(t *testing.T) {
	repo, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "c.dot"), []byte(childThreeSteps), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "c.dot"), filepath.Join(repo, "c.dot")); err != nil {
		t.Fatal(err)
	}
	src := "digraph ci {\n  start [shape=Mdiamond]\n  loop [shape=house, stack.child_dotfile=\"c.dot\"]\n  exit [shape=Msquare]\n  start -> loop -> exit\n}\n"
	_, ds, err := Load("ci.dot", []byte(src), WithRepoDir(repo))
	if err == nil || !hasRule(ds, RuleManagerChild) {
		t.Errorf("a child linked from outside the repository validates: %v\n%s", err, formatDiags(ds))
	}
}
