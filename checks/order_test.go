package checks

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/kilroy-bot/kilroy-bot/attractor"
)

// orderDOT declares its exit second and a node the run jumps back to
// after the one it reaches last, as hand-written pipelines do.
const orderDOT = `digraph order {
  start [shape=Mdiamond]
  done [shape=Msquare]
  fix [shape=box, prompt="fix it"]
  build [shape=parallelogram, tool_command="make"]
  test [shape=parallelogram, tool_command="make test"]
  start -> build -> test -> done
  test -> fix [condition="outcome=fail"]
  fix -> build
}
`

// TestTablesInRunOrder: the summary's node table and the terminal's
// lines follow the run (a node once, at its first start), then list what
// never ran; not the declaration order that put the unreached exit second.
func TestTablesInRunOrder(t *testing.T) {
	s := newScript(t, orderDOT, RunInfo{Pipeline: "order", RunID: "r1", HeadSHA: sha(1)})
	s.pass("start", sha(2), "build", time.Second).pass("build", sha(3), "test", time.Second)
	s.start("test").attempt("test", true, attractor.Outcome{Status: attractor.StatusFail, FailureReason: "make test exited with status 2"}, time.Second)
	s.checkpoint("test", sha(4)).edge("test", "fix")
	s.pass("fix", sha(5), "build", time.Second).start("build") // a second visit keeps build's place

	want := []string{"start", "build", "test", "fix", "done"}
	_, summary, _ := Summary(s.r.View(), RenderOptions{})
	if got := rowsOf(summary, regexp.MustCompile("(?m)^\\| `(\\w+)`")); !cmp.Equal(got, want) {
		t.Errorf("summary table rows %v, want %v:\n%s", got, want, summary)
	}
	term := TerminalSummary(s.r.View(), TerminalOptions{})
	if got := rowsOf(term, regexp.MustCompile(`(?m)^  \S+ (\w+) `)); !cmp.Equal(got, want) {
		t.Errorf("terminal lines %v, want %v:\n%s", got, want, term)
	}
}

func rowsOf(s string, re *regexp.Regexp) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}
