package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		body   string
		want   Command
		wantOK bool
	}{
		{"/kilroy run", Command{Verb: VerbRun}, true},
		{"/kilroy run ci", Command{Verb: VerbRun, Pipelines: []string{"ci"}}, true},
		{"  /kilroy\t RUN   ci   lint.v2 go_test-1  ", Command{Verb: VerbRun, Pipelines: []string{"ci", "lint.v2", "go_test-1"}}, true},
		{"/KILROY Run ci ci lint ci", Command{Verb: VerbRun, Pipelines: []string{"ci", "lint"}}, true},
		{"/kilroy run ci\r\n/kilroy cancel", Command{Verb: VerbRun, Pipelines: []string{"ci"}}, true},
		{"/kilroy run ci\nlint", Command{Verb: VerbRun, Pipelines: []string{"ci"}}, true},
		{"/kilroy run 1a2b3c4", Command{Verb: VerbRun, SHA: "1a2b3c4"}, true},
		{"/kilroy run --from-failure", Command{Verb: VerbRun, FromFailure: true}, true},
		{"/kilroy run ci --FROM-FAILURE lint", Command{Verb: VerbRun, Pipelines: []string{"ci", "lint"}, FromFailure: true}, true},
		{"/kilroy cancel --from-failure", Command{Verb: VerbCancel, Pipelines: []string{"--from-failure"}}, true},
		{"/kilroy run --from-failures", Command{Verb: VerbRun, Pipelines: []string{"--from-failures"}}, true},
		{"/kilroy run ci 0123456789abcdef0123456789abcdef01234567 lint", Command{Verb: VerbRun,
			Pipelines: []string{"ci", "lint"}, SHA: "0123456789abcdef0123456789abcdef01234567"}, true},
		{"/kilroy run 1a2b3c4 1a2b3c4", Command{Verb: VerbRun, SHA: "1a2b3c4"}, true},
		{"/kilroy run 1a2b3c4 5d6e7f8", Command{Verb: VerbInvalid, Invalid: []string{"5d6e7f8"}}, true},
		{"/kilroy run deadbeef 1a2b3c", Command{Verb: VerbRun, Pipelines: []string{"deadbeef", "1a2b3c"}}, true},
		{"/kilroy run 1A2B3C4", Command{Verb: VerbRun, Pipelines: []string{"1A2B3C4"}}, true},
		{"/kilroy cancel 1a2b3c4", Command{Verb: VerbCancel, Pipelines: []string{"1a2b3c4"}}, true},
		{"/kilroy cancel", Command{Verb: VerbCancel}, true},
		{"/kilroy cancel ci", Command{Verb: VerbCancel, Pipelines: []string{"ci"}}, true},
		{"/kilroy help", Command{Verb: VerbHelp}, true},
		{"/kilroy HELP me please", Command{Verb: VerbHelp}, true},
		{"/kilroy", Command{Verb: VerbHelp}, true},
		{"/kilroy rnu", Command{Verb: VerbUnknown, Unknown: "rnu", Suggestion: "run"}, true},
		{"/kilroy Rnu ci", Command{Verb: VerbUnknown, Unknown: "Rnu", Suggestion: "run"}, true},
		{"/kilroy runn", Command{Verb: VerbUnknown, Unknown: "runn", Suggestion: "run"}, true},
		{"/kilroy cancle", Command{Verb: VerbUnknown, Unknown: "cancle", Suggestion: "cancel"}, true},
		{"/kilroy hlep", Command{Verb: VerbUnknown, Unknown: "hlep", Suggestion: "help"}, true},
		{"/kilroy run.", Command{Verb: VerbUnknown, Unknown: "run.", Suggestion: "run"}, true},
		{"/kilroy deploy", Command{Verb: VerbUnknown, Unknown: "deploy"}, true},
		{"/kilroy x", Command{Verb: VerbUnknown, Unknown: "x"}, true},
		{"/kilroy answer approve yes", Command{Verb: VerbAnswer, Node: "approve", Choice: "yes"}, true},
		{"/Kilroy ANSWER approve  [Y]\t Yes please \r\nno", Command{Verb: VerbAnswer, Node: "approve", Choice: "[Y] Yes please"}, true},
		{"/kilroy answer approve", Command{Verb: VerbAnswer, Node: "approve"}, true},
		{"/kilroy answer", Command{Verb: VerbAnswer}, true},
		{"/kilroy answr approve yes", Command{Verb: VerbUnknown, Unknown: "answr", Suggestion: "answer"}, true},
		{"/kilroy run ../../etc ci $(id)", Command{Verb: VerbInvalid, Invalid: []string{"../../etc", "$(id)"}}, true},
		{"/kilroy run `ci`", Command{Verb: VerbInvalid, Invalid: []string{"`ci`"}}, true},
		{"/kilroy run cï", Command{Verb: VerbInvalid, Invalid: []string{"cï"}}, true},
		{"/kilroyrun", Command{}, false},
		{"/kilroy-run ci", Command{}, false},
		{"kilroy run", Command{}, false},
		{"> /kilroy run", Command{}, false},
		{"please /kilroy run", Command{}, false},
		{"\n/kilroy run", Command{}, false},
		{"Thanks!\n/kilroy run", Command{}, false},
		{"", Command{}, false},
		{"   ", Command{}, false},
	}
	for _, tt := range tests {
		got, ok := ParseCommand(tt.body)
		if ok != tt.wantOK {
			t.Errorf("ParseCommand(%q) ok = %v, want %v", tt.body, ok, tt.wantOK)
		}
		if diff := cmp.Diff(got, tt.want); diff != "" {
			t.Errorf("ParseCommand(%q) (-got +want):\n%s", tt.body, diff)
		}
	}
}

// FuzzParseCommand checks the parser's invariants on any body.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/kilroy run ci lint", "/kilroy rnu", "/KILROY help\nx", "/kilroy run ../x", "/kilroyrun", "\xff/kilroy"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		cmd, ok := ParseCommand(body)
		first, _, _ := strings.Cut(body, "\n")
		if again, okAgain := ParseCommand(first); okAgain != ok || !cmp.Equal(again, cmd) {
			t.Fatalf("ParseCommand(%q) depends on text after the first line", body)
		}
		if !ok {
			if !cmp.Equal(cmd, Command{}) {
				t.Fatalf("ParseCommand(%q) = %+v for a non-command", body, cmd)
			}
			return
		}
		if cmd.SHA != "" && (cmd.Verb != VerbRun || !isSHA(cmd.SHA)) {
			t.Fatalf("ParseCommand(%q): commit %q on a %s command", body, cmd.SHA, cmd.Verb)
		}
		switch cmd.Verb {
		case VerbRun, VerbCancel:
			for _, p := range cmd.Pipelines {
				if !pipelineName.MatchString(p) {
					t.Fatalf("ParseCommand(%q) passed pipeline name %q", body, p)
				}
			}
		case VerbAnswer:
			if cmd.Choice != "" && cmd.Node == "" {
				t.Fatalf("ParseCommand(%q): a choice without a node", body)
			}
			if cmd.Choice != strings.Join(strings.Fields(cmd.Choice), " ") || len(strings.Fields(cmd.Node)) > 1 {
				t.Fatalf("ParseCommand(%q): node %q and choice %q are not the words of the line", body, cmd.Node, cmd.Choice)
			}
		case VerbHelp, VerbInvalid:
		case VerbUnknown:
			if cmd.Unknown == "" {
				t.Fatalf("ParseCommand(%q): unknown verb without the word", body)
			}
		default:
			t.Fatalf("ParseCommand(%q) verb %q", body, cmd.Verb)
		}
	})
}
